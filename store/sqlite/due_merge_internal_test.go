package sqlite

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// The canonical and the foreign due queries run on separate snapshots: a
// deadline another writer rewrote between them can show in both. The
// merged listing names each run once, and still orders and bounds it.
func TestAddForeignDueListsARunOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) durable.Time { return durable.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	due := []store.DueRun{{RunID: "a", Until: at(1)}, {RunID: "b", Until: at(3)}}
	foreign := []store.DueRun{
		{RunID: "b", Until: at(2)}, // also canonical: kept at its canonical row
		{RunID: "c", Until: at(0)},
		{RunID: "d", Until: at(9)}, // not yet due
	}
	got := addForeignDue(due, foreign, t0.Add(5*time.Second), 10)
	want := []string{"c", "a", "b"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want runs %v", got, want)
	}
	for i, d := range got {
		if d.RunID != want[i] {
			t.Fatalf("got %v, want runs %v", got, want)
		}
	}
	if !got[2].Until.Equal(at(3).Time) {
		t.Fatalf("b listed at %v, want its canonical deadline", got[2].Until)
	}
	if got := addForeignDue(due, foreign, t0.Add(5*time.Second), 2); len(got) != 2 || got[1].RunID != "a" {
		t.Fatalf("limit 2: %v", got)
	}
}
