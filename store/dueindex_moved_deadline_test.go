package store_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestDueIndexMovedDeadlineKeepsEarliestFirst: Set on a run already in
// the index moves its deadline, and Next/ListDue see the new order (the
// heap is fixed, not left with a stale root).
func TestDueIndexMovedDeadlineKeepsEarliestFirst(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) durable.Time { return durable.NewTime(base.Add(time.Duration(s) * time.Second)) }
	var d store.DueIndex
	d.Set("a", at(1))
	d.Set("b", at(2))
	d.Set("c", at(3))
	d.Set("a", at(10)) // later than the others
	if got := d.Next(); !got.Equal(at(2).Time) {
		t.Errorf("Next = %v, want b's %v", got.Time, at(2).Time)
	}
	due := d.ListDue(base.Add(5*time.Second), 10)
	if len(due) != 2 || due[0].RunID != "b" || due[1].RunID != "c" {
		t.Errorf("ListDue at +5s = %+v, want b then c", due)
	}
	d.Set("c", at(0)) // earlier than the others
	if got := d.Next(); !got.Equal(at(0).Time) {
		t.Errorf("Next after moving c earlier = %v, want %v", got.Time, at(0).Time)
	}
}
