package benchwork

import (
	"context"
	"io"
	"math"
	"reflect"
	"testing"
	"time"
)

// TestMedianOfAnEvenCountIsTheLowerOne: Median's doc promises the lower
// of the two middle samples for an even count.
func TestMedianOfAnEvenCountIsTheLowerOne(t *testing.T) {
	s := Median([]*Sample{{Seconds: 4, Steps: 4}, {Seconds: 1, Steps: 1}, {Seconds: 3, Steps: 3}, {Seconds: 2, Steps: 2}})
	if s.Seconds != 2 || s.Steps != 2 {
		t.Fatalf("median of 1,2,3,4 s: %+v, want the 2 s sample", s)
	}
	if s = Median([]*Sample{{Seconds: 5}, {Seconds: 7}}); s.Seconds != 5 {
		t.Fatalf("median of 5,7 s: %v, want 5", s.Seconds)
	}
}

// TestSetCeilingIgnoresAMissingCeiling: with no ceiling measured
// (--ceiling-seconds 0: median 0) SetCeiling and SetFdatasyncInplace do
// nothing, so no go_vs_ceiling, go_vs_fdatasync_inplace or commits_per_s
// appears on the line.
func TestSetCeilingIgnoresAMissingCeiling(t *testing.T) {
	for _, c := range []float64{0, -1} {
		s := &Sample{CommitsPerRun: 2, RunsPerS: 100}
		s.SetCeiling(CeilingSQLiteFullExclusive, c)
		s.SetFdatasyncInplace(c)
		if s.GoVsCeiling != nil || s.GoVsCeilingOf != "" || s.GoVsFdatasyncInplace != nil || s.CommitsPerS != nil {
			t.Errorf("ceilings %v: %+v, want no ratio", c, s)
		}
	}
	s := &Sample{CommitsPerRun: 2, RunsPerS: 100}
	s.SetCeiling(CeilingSQLiteFullExclusive, 400)
	s.SetFdatasyncInplace(800)
	if s.CommitsPerS == nil || *s.CommitsPerS != 200 || *s.GoVsCeiling != 0.5 ||
		s.GoVsCeilingOf != CeilingSQLiteFullExclusive || *s.GoVsFdatasyncInplace != 0.25 {
		t.Errorf("ceilings 400 and 800 on 2 commits/run × 100 runs/s: %+v", s)
	}
}

// TestSampleFiguresArePerRunOfTheTimedLoop: the JSON line's rates divide
// by the timed seconds (steps_per_s by steps, runs_per_s by runs), the
// per-run fields divide the verified totals by the runs
// (state_json_bytes rounded to the nearest byte, as the README's 1100 is
// a per-run figure), commits_per_run counts the timed loop (not the
// pilot) and file_writes_per_run is present for both JSON store kinds.
func TestSampleFiguresArePerRunOfTheTimedLoop(t *testing.T) {
	o := &Outcome{Workload: W1Chain, RunIDs: []string{"a", "b", "c", "d"}, Steps: 40, Elapsed: 2 * time.Second}
	o.Ops.Ops[OpRunCommit] = 8
	o.Ops.FileWrites = 12
	pilot := &Outcome{Workload: W1Chain, RunIDs: []string{"p"}}
	pilot.Ops.Ops[OpRunCommit] = 7 // not the timed loop's figure
	pilot.Ops.Ops[OpRunGet] = 3
	v := &Verified{Runs: 4, LedgerRecords: 8, LedgerBytes: 4530, StateBytes: 4402}
	m := &measurer{cfg: MeasureConfig{Store: StoreJSONFsync}, log: io.Discard}
	s := m.sample(o, v, pilot, 12.34)
	if s.Runs != 4 || s.Steps != 40 || s.Seconds != 2 || s.StepsPerS != 20 || s.RunsPerS != 2 {
		t.Errorf("runs %d steps %d seconds %v steps_per_s %v runs_per_s %v; want 4, 40, 2, 20, 2",
			s.Runs, s.Steps, s.Seconds, s.StepsPerS, s.RunsPerS)
	}
	if s.LedgerRecordsPerRun != 2 || s.CommitsPerRun != 2 || s.StateJSONBytes != 1101 || s.LedgerBytesPerRun != 1132.5 {
		t.Errorf("records/run %v commits/run %v state B %d ledger B/run %v; want 2, 2, 1101 (1100.5 rounded), 1132.5",
			s.LedgerRecordsPerRun, s.CommitsPerRun, s.StateJSONBytes, s.LedgerBytesPerRun)
	}
	if s.FileWritesPerRun == nil || *s.FileWritesPerRun != 3 {
		t.Errorf("file_writes_per_run on %s = %v, want 3", StoreJSONFsync, s.FileWritesPerRun)
	}
	if want := map[string]float64{"run_commit": 7, "run_get": 3}; !reflect.DeepEqual(s.OpsPerRun, want) {
		t.Errorf("ops_per_run %v, want the pilot's %v", s.OpsPerRun, want)
	}
	if s.PeakRSSMB != 12.3 || !s.Fsync {
		t.Errorf("peak_rss_mb %v fsync %v; want 12.3, true", s.PeakRSSMB, s.Fsync)
	}
}

// TestSampleRoundsPerRunFiguresToThreePlaces: commits_per_run and
// ledger_records_per_run keep three decimals (the README's 2.0 and 13
// are whole only for these workloads); rounding commits to one place
// would move go_vs_ceiling, which multiplies it by runs_per_s.
func TestSampleRoundsPerRunFiguresToThreePlaces(t *testing.T) {
	o := &Outcome{Workload: W1Chain, RunIDs: []string{"a", "b", "c"}, Steps: 30, Elapsed: time.Second}
	o.Ops.Ops[OpRunCommit] = 10
	v := &Verified{Runs: 3, LedgerRecords: 7}
	m := &measurer{cfg: MeasureConfig{Store: StoreMemory}, log: io.Discard}
	s := m.sample(o, v, &Outcome{RunIDs: []string{"p"}}, 0)
	if s.CommitsPerRun != 3.333 || s.LedgerRecordsPerRun != 2.333 {
		t.Errorf("commits/run %v records/run %v for 10 and 7 over 3 runs; want 3.333 and 2.333", s.CommitsPerRun, s.LedgerRecordsPerRun)
	}
}

// TestRoundOfAnInfiniteRateIsZero: a timed section too short for the
// clock (0 s) gives an infinite rate; round makes it 0 so that the
// JSON line can still be encoded (encoding/json refuses +Inf).
func TestRoundOfAnInfiniteRateIsZero(t *testing.T) {
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		if got := round(x, 1); got != 0 {
			t.Errorf("round(%v, 1) = %v, want 0", x, got)
		}
	}
}

// TestOutcomeStepsAreThisWorkloadsOnly: the steps counter of an env
// is shared by every workload run on it; each outcome's steps are the
// difference over its own loop, so a second workload on the same env
// (W4 after W1, or a test's second run) is not credited the first one's
// steps.
func TestOutcomeStepsAreThisWorkloadsOnly(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	if _, err := RunW1(ctx, env, 2, nil); err != nil {
		t.Fatal(err)
	}
	out, err := RunW3Past(ctx, env, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Steps != 6 {
		t.Fatalf("W3 after W1 on one env: %d steps, want 6 (3 runs × 2)", out.Steps)
	}
}
