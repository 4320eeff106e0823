package pyjson

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The encoder and the decoder count depth alike (every value counts), so
// the encoder accepts exactly what the decoder reads back. The bug this
// guards against: the encoder accepted a scalar one level past the deepest
// container it allowed, which the decoder reads at maxDepth+1, so a store
// wrote it (Check passed) and could not read it back.
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

// The deepest document the encoder writes is one CPython's json.loads
// reads from a call chain 80 frames deep (a store's load under a runner
// or web server), where json.loads raises RecursionError near the
// recursion limit of 1000 frames; the decoder reads deeper documents.
func TestMaxDepthIsPythonReadable(t *testing.T) {
	if maxDecodeDepth < maxDepth {
		t.Fatalf("maxDecodeDepth %d < maxDepth %d", maxDecodeDepth, maxDepth)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	var v any = int64(1) // the scalar at maxDepth
	for range maxDepth {
		v = []any{v}
	}
	for _, st := range []Style{Line, Pretty} {
		doc, err := Marshal(v, st)
		if err != nil {
			t.Fatal(err)
		}
		const script = "import json, sys\n" +
			"def load(n, s):\n    return json.loads(s) if n == 0 else load(n - 1, s)\n" +
			"load(80, sys.stdin.read())\n"
		cmd := exec.Command(py, "-c", script)
		cmd.Stdin = bytes.NewReader(doc)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("python3 json.loads of a document nested %d levels: %v\n%.300s", maxDepth, err, out)
		}
	}
}

// The decoder reads a document nested past the encoder's MaxDepth (one
// another writer nested deeper still loads) and refuses one nested one
// level past its own limit (TestEncoderDecoderDepthAgree checks that all
// the encoder writes reads back).
func TestDecodeRefusesOneLevelPastDecodeLimit(t *testing.T) {
	t.Parallel()
	doc := func(arrays int) []byte {
		return []byte(strings.Repeat("[", arrays) + "1" + strings.Repeat("]", arrays))
	}
	if _, err := Decode(doc(MaxDepth + 1)); err != nil {
		t.Fatalf("Decode with the scalar at MaxDepth+1: %v", err)
	}
	if _, err := Decode(doc(maxDecodeDepth)); err != nil {
		t.Fatalf("Decode with the scalar at maxDecodeDepth: %v", err)
	}
	if _, err := Decode(doc(maxDecodeDepth + 1)); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("Decode with the scalar at maxDecodeDepth+1 = %v; want nesting too deep", err)
	}
}
