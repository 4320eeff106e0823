package benchwork

import (
	"io"
	"testing"
	"time"
)

// TestSamplePerStepAndPerRunAllocationFigures: allocs_per_step divides the
// timed loop's heap allocations by its steps, and page_faults_per_run its
// minor page faults by its runs (the Sample field docs).
func TestSamplePerStepAndPerRunAllocationFigures(t *testing.T) {
	o := &Outcome{Workload: W1Chain, RunIDs: []string{"a", "b", "c", "d"}, Steps: 40, Elapsed: time.Second,
		Mallocs: 400, Faults: 8}
	m := &measurer{cfg: MeasureConfig{Store: StoreMemory}, log: io.Discard}
	s := m.sample(o, &Verified{Runs: 4}, &Outcome{RunIDs: []string{"p"}}, 1)
	if s.AllocsPerStep != 10 || s.PageFaultsPerRun != 2 {
		t.Errorf("allocs_per_step %v page_faults_per_run %v; want 400/40 = 10 and 8/4 = 2", s.AllocsPerStep, s.PageFaultsPerRun)
	}
}
