package benchwork

// Tests added by mutation testing of the bench workloads: each guards a
// promise of the package's doc comments or of the bench README
// (/work/shared/bench/README.md) that no other test checked.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// tamperStore alters what Verify reads back: the run states (run) and
// the ledgers (ledger), as a store holding wrong results would return
// them. It is installed as the counting wrapper's inner store once the
// workload has run (Verify only reads runs and ledgers).
type tamperStore struct {
	store.Store
	run    func(*durable.RunState)
	ledger func([]*durable.StepRecord) []*durable.StepRecord
}

func (s *tamperStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	st, err := s.Store.RunGet(ctx, runID)
	if err == nil && s.run != nil {
		s.run(st)
	}
	return st, err
}

func (s *tamperStore) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	recs, err := s.Store.LedgerList(ctx, p)
	if err == nil && s.ledger != nil {
		recs = s.ledger(recs)
	}
	return recs, err
}

// TestVerifyCatchesWrongResults: Verify's doc promises it checks status,
// output, the workload's vars (W1 k0…k9 at n9, W2 answer, W3 woke, W3b
// no woke) and a ledger of seqs 1…n ending with the terminal
// "completed" status event, and the README says a workload whose checks
// fail never prints a number. Each case stores one wrong result in
// otherwise good runs and Verify must fail naming the run.
func TestVerifyCatchesWrongResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a W3b wait (250 ms)")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, workload, want string
		run                  func(*durable.RunState)
		ledger               func([]*durable.StepRecord) []*durable.StepRecord
	}{
		{name: "ledger seq gap", workload: W1Chain, want: "seq",
			ledger: func(r []*durable.StepRecord) []*durable.StepRecord { r[len(r)-1].Seq++; return r }},
		{name: "last record is another terminal status", workload: W1Chain, want: "terminal status",
			ledger: func(r []*durable.StepRecord) []*durable.StepRecord {
				r[len(r)-1].IdempotencyKey = "system:terminal_status:failed"
				return r
			}},
		{name: "wrong output", workload: W1Chain, want: "output",
			run: func(st *durable.RunState) { st.Output["nodes"] = int64(9) }},
		{name: "w1 ended at another node", workload: W1Chain, want: "n8",
			run: func(st *durable.RunState) { st.CurrentNode = "n8" }},
		{name: "w2 answer var", workload: W2AskResume, want: "vars.answer",
			run: func(st *durable.RunState) { st.Vars["answer"] = map[string]any{"text": "no"} }},
		{name: "w3 woke var", workload: W3Past, want: "vars.woke",
			run: func(st *durable.RunState) {
				st.Vars["woke"] = map[string]any{"ready": true, "until": "2001-01-01T00:00:00+00:00"}
			}},
		{name: "w3b wrote woke", workload: W3Due, want: "vars.woke",
			run: func(st *durable.RunState) { st.Vars["woke"] = map[string]any{"ready": true} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := memoryEnv(t)
			out, err := Run(ctx, env, tc.workload, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(ctx, env, out); err != nil {
				t.Fatalf("untouched runs: %v", err)
			}
			env.Store.inner = &tamperStore{Store: env.Store.inner, run: tc.run, ledger: tc.ledger}
			_, err = Verify(ctx, env, out)
			if err == nil || !strings.Contains(err.Error(), out.RunIDs[0]) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify of a %s with a wrong result: err = %v, want an error naming run %s and %q",
					tc.workload, err, out.RunIDs[0], tc.want)
			}
		})
	}
}

// TestVerifyW4ComparesRecordsRead: for W4, Verify re-reads each ledger
// and checks that the timed loop read as many records (its doc); steps
// are the records read, so a loop that missed records would report an
// inflated or deflated steps_per_s.
func TestVerifyW4ComparesRecordsRead(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	w1, err := RunW1(ctx, env, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	w4, err := RunW4(ctx, env, w1.RunIDs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, env, w4); err != nil {
		t.Fatalf("untouched W4: %v", err)
	}
	w4.Steps--
	if _, err := Verify(ctx, env, w4); err == nil || !strings.Contains(err.Error(), "w4") {
		t.Fatalf("W4 that read %d records of %d: err = %v, want a w4 error", w4.Steps, w4.Steps+1, err)
	}
}

// TestVerifyRefusesAnOutcomeWithoutRuns: an outcome with no runs has
// nothing verified and its per-run figures would divide by zero; Verify
// must fail rather than pass it on to become a JSON line.
func TestVerifyRefusesAnOutcomeWithoutRuns(t *testing.T) {
	env := memoryEnv(t)
	if _, err := Verify(context.Background(), env, &Outcome{Workload: W1Chain}); err == nil {
		t.Fatal("Verify passed an outcome without runs")
	}
}

// TestCountsArithmetic: Commits is RunCommit + LedgerAppend + RunClaim +
// RunRelease (the doc: each one SQLite transaction), Sub subtracts every
// counter (file writes included: file_writes_per_run comes from a
// difference of snapshots), and PerRun lists only the non-zero calls.
func TestCountsArithmetic(t *testing.T) {
	var c Counts
	c.Ops[OpRunCommit], c.Ops[OpLedgerAppend], c.Ops[OpRunClaim], c.Ops[OpRunRelease] = 10, 4, 2, 2
	c.Ops[OpRunGet] = 30
	c.RecordsAppended, c.FileWrites, c.StoreTime = 9, 14, 5*time.Second
	if got := c.Commits(); got != 18 {
		t.Errorf("Commits() = %d, want 10+4+2+2 = 18", got)
	}
	var o Counts
	o.Ops[OpRunCommit], o.Ops[OpRunGet] = 2, 6
	o.RecordsAppended, o.FileWrites, o.StoreTime = 1, 4, time.Second
	d := c.Sub(o)
	if d.Ops[OpRunCommit] != 8 || d.Ops[OpRunGet] != 24 || d.RecordsAppended != 8 || d.FileWrites != 10 || d.StoreTime != 4*time.Second {
		t.Errorf("Sub: %+v", d)
	}
	per := d.PerRun(2)
	want := map[string]float64{"run_commit": 4, "run_get": 12, "ledger_append": 2, "run_claim": 1, "run_release": 1}
	if !reflect.DeepEqual(per, want) {
		t.Errorf("PerRun(2) = %v, want only the non-zero calls %v", per, want)
	}
}

// nopStore accepts the writes the counting wrapper forwards.
type nopStore struct{ store.Store }

func (nopStore) RunCommit(context.Context, *store.CommitParams) error { return nil }
func (nopStore) LedgerAppend(context.Context, string, []*durable.StepRecord) error {
	return nil
}

// TestCountingFileWrites: Counts.FileWrites is one run-file replacement
// per RunCommit plus one ledger append per call that carries records
// (the doc), the basis of file_writes_per_run.
func TestCountingFileWrites(t *testing.T) {
	ctx := context.Background()
	st, c := Wrap(nopStore{})
	rec := []*durable.StepRecord{{}, {}}
	for _, call := range []func() error{
		func() error { return st.RunCommit(ctx, &store.CommitParams{}) },             // 1
		func() error { return st.RunCommit(ctx, &store.CommitParams{Records: rec}) }, // 2
		func() error { return st.LedgerAppend(ctx, "r", rec) },                       // 1
		func() error { return st.LedgerAppend(ctx, "r", nil) },                       // 0
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	s := c.Snapshot()
	if s.FileWrites != 4 || s.RecordsAppended != 4 || s.Commits() != 4 {
		t.Errorf("file writes %d (want 4), records %d (want 4), commits %d (want 4)", s.FileWrites, s.RecordsAppended, s.Commits())
	}
}

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

// TestW3DuePhasesAddUpToSeconds: the README's W3b "seconds = phase A +
// phase B (both also reported: phase_a_s, phase_b_s)"; the untimed gap
// is in neither.
func TestW3DuePhasesAddUpToSeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a W3b wait (250 ms)")
	}
	env := memoryEnv(t)
	out, err := RunW3Due(context.Background(), env, 3, &Stopwatch{})
	if err != nil {
		t.Fatal(err)
	}
	if out.PhaseA <= 0 || out.PhaseB <= 0 || out.PhaseA+out.PhaseB != out.Elapsed {
		t.Fatalf("phase A %v + phase B %v != seconds %v", out.PhaseA, out.PhaseB, out.Elapsed)
	}
	if out.Elapsed >= DueDelay {
		t.Fatalf("seconds %v include the untimed %v gap", out.Elapsed, DueDelay)
	}
}

// TestStoreKindDurability: Fsync reports json_fsync and sqlite_full as
// syncing every commit (the JSON line's "fsync"), and the stores opened
// for them do sync: json is the Python-like store without fsync, json_fsync
// the default synced one, sqlite_full SQLite with synchronous=FULL (the
// README's "durable steps/s" comparison).
func TestStoreKindDurability(t *testing.T) {
	want := map[string]bool{StoreMemory: false, StoreJSON: false, StoreJSONFsync: true, StoreSQLite: false,
		StoreSQLiteFull: true, StoreSQLiteShared: false, StorePostgres: false}
	for _, k := range StoreKinds {
		if Fsync(k) != want[k] {
			t.Errorf("Fsync(%q) = %v, want %v", k, Fsync(k), want[k])
		}
	}
	ctx := context.Background()
	// The JSON-file store keeps its Config.NoSync in the unexported field
	// noSync; read it, as nothing else shows whether it fsyncs.
	for kind, noSync := range map[string]bool{StoreJSON: true, StoreJSONFsync: false} {
		st, err := OpenStore(ctx, kind, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f := reflect.ValueOf(st).Elem().FieldByName("noSync")
		_ = st.Close()
		if !f.IsValid() {
			t.Fatalf("%s: the JSON-file store has no noSync field any more; update this test", kind)
		}
		if f.Bool() != noSync {
			t.Errorf("%s store opened with NoSync %v, want %v", kind, f.Bool(), noSync)
		}
	}
	// A synchronous=FULL SQLite store preallocates its redo log (see
	// redoPreallocated in store/sqlite): the visible sign of FULL.
	redoSize := func(kind string) int64 {
		dir := t.TempDir()
		st, err := OpenStore(ctx, kind, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		fi, err := os.Stat(filepath.Join(dir, "runtime.sqlite3-redo"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if full, normal := redoSize(StoreSQLiteFull), redoSize(StoreSQLite); full < 1<<20 || normal >= 1<<20 {
		t.Errorf("redo log sizes: sqlite_full %d B (want >= 1 MiB, preallocated by synchronous=FULL), sqlite %d B", full, normal)
	}
}
