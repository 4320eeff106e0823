package scheduler_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestZeroScheduledCloseIsAnError: a Scheduled not made by NewScheduled
// has no scheduler; Close said so only for a nil pointer and panicked on
// a zero value.
func TestZeroScheduledCloseIsAnError(t *testing.T) {
	var s scheduler.Scheduled
	if err := s.Close(); err == nil {
		t.Fatal("Close of a zero Scheduled returned nil")
	}
}
