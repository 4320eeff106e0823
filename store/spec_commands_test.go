package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Spec §1.9: a command's run_id and type are "required non-empty"; blank
// ones (after Python's strip) are refused as an invalid command, and a
// command without ts is stamped with the time of the append.
func TestSpecCommandRequiresRunIDAndType(t *testing.T) {
	for _, c := range []*durable.CommandRecord{
		{Type: "pause"}, {RunID: "  ", Type: "pause"}, {RunID: "r1"}, {RunID: "r1", Type: "\t"},
	} {
		if _, err := store.PrepareCommand(c, time.Now()); !errors.Is(err, store.ErrInvalidCommand) {
			t.Errorf("PrepareCommand(run_id %q, type %q) = %v; want ErrInvalidCommand", c.RunID, c.Type, err)
		}
	}
	now := time.Date(2026, 1, 1, 9, 0, 1, 1000, time.UTC)
	c := &durable.CommandRecord{RunID: "r1", Type: "pause"}
	if _, err := store.PrepareCommand(c, now); err != nil {
		t.Fatal(err)
	}
	if c.TSString() != "2026-01-01T09:00:01.000001+00:00" || c.Seq != 0 {
		t.Errorf("ts %q, seq %d; want the append time and seq 0 until the store assigns one", c.TSString(), c.Seq)
	}
}
