package code

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// A builtin's loop over one of our ranges ends quietly when the watchdog
// stops the code, and Starlark need not look at the cancellation again
// before the code returns: len(filter(None, range(10**9))) under a 20 ms
// timeout sometimes returned a count of the items reached instead of the
// timeout. A stop recorded by the time the code returns is the result.
func TestStopRecordedWhenTheCodeReturnsIsALimitError(t *testing.T) {
	got, _, err := execute(context.Background(), Limits{}, func(th *starlark.Thread) (starlark.Value, error) {
		g := th.Local(guardKey).(*guard)
		g.cancel(th, "timeout after 20ms") // the watchdog, while a builtin's loop ran
		return starlark.MakeInt(1234), nil // the count the loop had reached
	})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "timeout after 20ms") {
		t.Fatalf("got %v, %v; want the timeout (ErrLimit), not the value cut short", got, err)
	}
}
