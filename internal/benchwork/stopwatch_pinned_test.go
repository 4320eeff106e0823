package benchwork

import (
	"context"
	"testing"
	"time"
)

// countingTimer counts the StartTimer and StopTimer calls a Stopwatch
// makes on its Outer timer.
type countingTimer struct{ starts, stops int }

func (c *countingTimer) StartTimer() { c.starts++ }
func (c *countingTimer) StopTimer()  { c.stops++ }

var sink [][]byte

// TestStopwatchAccumulatesSections: Elapsed and Mallocs add up every timed
// section (W3b's two phases), and a Start while running neither restarts
// the section (the allocations made since the first Start still count)
// nor starts Outer again.
func TestStopwatchAccumulatesSections(t *testing.T) {
	outer := &countingTimer{}
	sw := &Stopwatch{Outer: outer, Elapsed: time.Hour, Mallocs: 1 << 40}
	sw.Start()
	for range 1000 {
		sink = append(sink, make([]byte, 64))
	}
	sink = nil
	sw.Start()
	sw.Stop()
	if sw.Elapsed < time.Hour || sw.Mallocs < 1<<40+1000 {
		t.Errorf("after a section: Elapsed %v, Mallocs %d; want >= 1h and >= 2^40+1000 (added to the earlier sections)", sw.Elapsed, sw.Mallocs)
	}
	if outer.starts != 1 || outer.stops != 1 {
		t.Errorf("Outer started %d and stopped %d times, want 1 and 1", outer.starts, outer.stops)
	}
}

// TestOutcomeCountsOnlyItsOwnSections: a workload given a Stopwatch that
// already timed other work reports only its own timed loop in Elapsed and
// Mallocs (the Go benchmarks and the bench command may reuse one).
func TestOutcomeCountsOnlyItsOwnSections(t *testing.T) {
	env := memoryEnv(t)
	sw := &Stopwatch{Elapsed: time.Hour, Mallocs: 1 << 40}
	out, err := RunW1(context.Background(), env, 1, sw)
	if err != nil {
		t.Fatal(err)
	}
	if out.Elapsed <= 0 || out.Elapsed >= time.Hour || out.Mallocs == 0 || out.Mallocs >= 1<<40 {
		t.Errorf("outcome Elapsed %v, Mallocs %d; want only the run's own (not the stopwatch's earlier hour and 2^40 allocations)", out.Elapsed, out.Mallocs)
	}
}
