package code

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Promise: docs/visualflow.md ("Code nodes"): Go loops stop at the
// timeout or the memory limit like Starlark code. A tuple sharing one
// 1 MiB string a million times is 16 MiB of references, but hashing it
// (t in {}), comparing it or sorting such values is 1 TiB of work in one
// Go loop the watchdog cannot interrupt, and its JSON could never be
// under the limit. A list or tuple repeat whose text (each item's, times
// the count) would pass the memory limit is now refused (repeat.go
// checkRepeatText).
func TestRepeatOfSharedLongStringIsRefusedByItsText(t *testing.T) {
	const src = "def f(_input):\n    t = (\"a\" * (1 << 20),) * (1 << 20)\n    return t in {}\n"
	errText, died, hung, out, child := codeInTimedChild(t, "REPEAT_TEXT_CHILD", 0, src, Limits{Timeout: 500 * time.Millisecond}, 4*time.Second)
	if child {
		return
	}
	wantChildLimitError(t, "hash of a tuple sharing a long string", errText, died, hung, out)
	if !strings.Contains(errText, "repeat of a tuple") {
		t.Errorf("err = %q, want the repeat refused", errText)
	}
}

func TestRepeatUnderTheTextLimitIsAllowed(t *testing.T) {
	for _, expr := range []string{`len(["ab"] * 1000)`, `len(("a" * 1024,) * 1000)`, `len([[0] * 10] * 1000)`} {
		if _, _, err := Eval(context.Background(), expr, nil, Limits{MaxMemory: 8 << 20}); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
	_, _, err := Eval(context.Background(), `len(["a" * (1 << 20)] * 9)`, nil, Limits{MaxMemory: 8 << 20})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "repeat of a list 9 times") {
		t.Errorf("a 9 MiB text under an 8 MiB limit: err = %v, want the repeat refused", err)
	}
}
