package pyjson

import (
	"strings"
	"testing"
)

// Keys that are not UTF-8 are written with U+FFFD for each bad byte; two
// keys that would be written the same are refused, naming the object,
// while a single such key is written repaired.
func TestKeysWrittenTheSameOnceRepairedAreRefused(t *testing.T) {
	for _, m := range []map[string]any{
		{"k\xff": 1, "k\xfe": 2},
		{"k\xff": 1, "k\uFFFD": 2},
		{"a\xff\xfeb": 1, "a\uFFFD\uFFFDb": 2},
	} {
		_, err := Marshal(map[string]any{"outer": m}, Line)
		if err == nil || !strings.Contains(err.Error(), "outer") || !strings.Contains(err.Error(), "same key") {
			t.Errorf("Marshal of %q: %v; want a refusal naming outer", m, err)
		}
		if err := CheckMember(m, "vars.m", 1); err == nil {
			t.Errorf("CheckMember of %q accepted it", m)
		}
	}
	out, err := Marshal(map[string]any{"k\xff": 1, "k\xff\xff": 2, "k": 3}, Line)
	if err != nil || string(out) != "{\"k\": 3, \"k\uFFFD\": 1, \"k\uFFFD\uFFFD\": 2}" {
		t.Fatalf("distinct keys once repaired: %s, %v", out, err)
	}
}
