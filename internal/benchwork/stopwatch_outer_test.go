package benchwork

import "testing"

// probeTimer records, when the Stopwatch starts and stops it, whether
// the Stopwatch had taken its own readings (heap allocations, page
// faults) yet.
type probeTimer struct {
	sw                    *Stopwatch
	readBeforeStart       bool
	mallocsAddedAtStop    bool
	startCalls, stopCalls int
}

func (p *probeTimer) StartTimer() {
	p.startCalls++
	p.readBeforeStart = p.sw.m0 != 0
}

func (p *probeTimer) StopTimer() {
	p.stopCalls++
	p.mallocsAddedAtStop = p.sw.Mallocs != 0
}

// TestStopwatchReadingsStayOutsideTheOuterTimer: the Stopwatch's readings
// (runtime.ReadMemStats, a stop-the-world of tens of µs, and getrusage)
// are taken before Outer starts and after it stops, so that a Go
// benchmark's ns/op is the timed section alone, as the Stopwatch's own
// Elapsed is. testing.B takes its own allocation readings outside its
// clock in the same way.
func TestStopwatchReadingsStayOutsideTheOuterTimer(t *testing.T) {
	sw := &Stopwatch{}
	p := &probeTimer{sw: sw}
	sw.Outer = p
	sw.Start()
	for range 100 {
		sink = append(sink, make([]byte, 64))
	}
	sink = nil
	sw.Stop()
	if p.startCalls != 1 || p.stopCalls != 1 {
		t.Fatalf("Outer started %d and stopped %d times, want 1 and 1", p.startCalls, p.stopCalls)
	}
	if !p.readBeforeStart {
		t.Error("Outer started before the Stopwatch read the allocation count: the reading is inside the benchmark's clock")
	}
	if p.mallocsAddedAtStop {
		t.Error("Outer stopped after the Stopwatch read the allocation count: the reading is inside the benchmark's clock")
	}
	if sw.Mallocs < 100 {
		t.Errorf("Mallocs %d, want at least the section's 100 allocations", sw.Mallocs)
	}
}
