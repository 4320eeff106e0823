package pyjson

import (
	"strings"
	"testing"
)

// The encoder accepted a value the decoder refuses (found by a review): a
// scalar one level past the deepest container the encoder allowed, which
// the decoder reads at maxDepth+1. A store wrote it (Check passed) and
// could not read it back. Both now count every value.
func TestEncoderDecoderDepthAgree(t *testing.T) {
	deep := func(levels int) any {
		var v any = []any{int64(1)}
		for range levels {
			v = []any{v}
		}
		return v
	}
	// The deepest value the decoder reads: its innermost scalar at
	// maxDepth. The encoder writes it and the decoder reads it back.
	ok := deep(maxDepth - 1)
	b, err := Marshal(ok, Line)
	if err != nil {
		t.Fatalf("Marshal at the limit: %v", err)
	}
	if _, err := Decode(b); err != nil {
		t.Fatalf("Decode at the limit: %v", err)
	}
	// One level deeper: refused by the check and the encoder alike.
	bad := deep(maxDepth)
	if err := Check(bad, "v"); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("Check one level past the limit = %v; want nesting too deep", err)
	}
	if _, err := Marshal(bad, Line); err == nil {
		t.Errorf("Marshal one level past the limit succeeded; the decoder refuses it")
	}
}
