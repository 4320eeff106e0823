package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Python's datetime.min (0001-01-01T00:00:00, fromisoformat reads it with
// any offset spelling) is Go's zero time.Time, which durable.Time uses for
// "no time" (written null). ParseTime reads it as one microsecond later.
// The bug this guards against: ParseTime returned the zero time, so the
// instant silently became "absent": a WAIT_EVENT with until at that
// instant got no deadline and waited forever.
func TestDatetimeMinIsNotAbsent(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"0001-01-01T00:00:00+00:00", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00"} {
		got, err := durable.ParseTime(in)
		if err != nil {
			t.Fatalf("ParseTime(%q): %v", in, err)
		}
		if got.IsZero() || got.String() != "0001-01-01T00:00:00.000001+00:00" {
			t.Errorf("ParseTime(%q) = %q, zero=%v: a valid instant read as no time", in, got.String(), got.IsZero())
		}
		w := &durable.WaitState{Reason: durable.WaitEvent, Until: got}
		if !w.ReleasedWhenDue() {
			t.Errorf("a WAIT_EVENT with until %q has no deadline", in)
		}
	}
}
