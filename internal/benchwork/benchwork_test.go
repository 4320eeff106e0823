package benchwork

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/jackc/pgx/v5"
)

// testStores are the store kinds the tests and benchmarks cover.
var testStores = []string{StoreMemory, StoreJSON, StoreSQLite, StoreSQLiteFull}

// TestMeasure runs every workload with N=20 on every store, the way the
// bench command does, and checks the figures that do not depend on speed.
func TestMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs W3b's 250 ms waits")
	}
	ctx := context.Background()
	const n = 20
	for _, kind := range testStores {
		t.Run(kind, func(t *testing.T) {
			samples, err := Measure(ctx, MeasureConfig{Store: kind, Workloads: Workloads, Runs: n, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if len(samples) != len(Workloads) {
				t.Fatalf("%d samples, want %d", len(samples), len(Workloads))
			}
			for _, s := range samples {
				t.Logf("%s: %d steps, %.1f runs/s, %.1f records/run, %.1f commits/run, %d state B, ops %v",
					s.Workload, s.Steps, s.RunsPerS, s.LedgerRecordsPerRun, s.CommitsPerRun, s.StateJSONBytes, s.OpsPerRun)
				if s.Store != kind || s.Runs != n || s.Seconds <= 0 || s.RunsPerS <= 0 {
					t.Errorf("%s: bad sample %+v", s.Workload, s)
				}
				want := StepsPerRun(s.Workload) * n
				if s.Workload == W4LedgerRead {
					want = 2 * n // W1's ledgers: completion + status event
				}
				if s.Steps != want {
					t.Errorf("%s: %d steps, want %d", s.Workload, s.Steps, want)
				}
				if s.Workload != W4LedgerRead && (s.StateJSONBytes <= 0 || s.CommitsPerRun < 2 || s.LedgerRecordsPerRun < 2) {
					t.Errorf("%s: state %d B, %.1f commits/run, %.1f records/run", s.Workload,
						s.StateJSONBytes, s.CommitsPerRun, s.LedgerRecordsPerRun)
				}
				if len(s.OpsPerRun) == 0 {
					t.Errorf("%s: no store calls counted on the pilot", s.Workload)
				}
				if s.Workload == W3Due {
					// 20 runs fit in one batch: one poll with work, one empty.
					if *s.Cycles != 2 || *s.ImmediateFallbacks != 0 {
						t.Errorf("w3b: %d cycles, %d immediate fallbacks; want 2 and 0", *s.Cycles, *s.ImmediateFallbacks)
					}
				}
			}
			if w1 := samples[0]; w1.Workload != W1Chain || w1.CommitsPerRun != 2 || w1.LedgerRecordsPerRun != 2 {
				t.Errorf("w1: %.1f commits/run, %.1f records/run; the kernel commits at start and completion (2 records)",
					w1.CommitsPerRun, w1.LedgerRecordsPerRun)
			}
		})
	}
}

// TestVerifyCatchesBadRuns checks that verification fails, naming the run,
// when a stored run differs from what its workload produces.
func TestVerifyCatchesBadRuns(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	out, err := RunW1(ctx, env, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, env, out); err != nil {
		t.Fatalf("untouched runs: %v", err)
	}
	bad := out.RunIDs[1]
	run, err := env.Store.RunGet(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	run.Vars["k3"] = "y"
	if err := env.Store.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(ctx, env, out)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"k3"`) {
		t.Fatalf("tampered vars: err = %v", err)
	}

	run.Status = durable.RunFailed
	if err := env.Store.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	if _, err = Verify(ctx, env, out); err == nil || !strings.Contains(err.Error(), "status failed") {
		t.Fatalf("failed run: err = %v", err)
	}
}

// TestCountingTimesOnlyWhenAsked: the bench command's timed loops read no
// clock inside store calls (Python's harness times bare stores); the Go
// benchmarks ask for the store time and get it.
func TestCountingTimesOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	for _, timed := range []bool{false, true} {
		env, err := NewEnv(ctx, StoreMemory, "")
		if err != nil {
			t.Fatal(err)
		}
		env.Store.Timed = timed
		if _, err := RunW1(ctx, env, 3, nil); err != nil {
			t.Fatal(err)
		}
		snap := env.Store.Snapshot()
		if snap.Commits() != 6 {
			t.Errorf("timed=%v: %d commits counted, want 6", timed, snap.Commits())
		}
		if got := snap.StoreTime > 0; got != timed {
			t.Errorf("timed=%v: store time %v", timed, snap.StoreTime)
		}
		_ = env.Close()
	}
}

// TestCountingKeepsOptionalInterfaces checks that the counting wrapper
// exposes exactly the optional interfaces of the wrapped store, so the
// kernel takes the same paths through it.
func TestCountingKeepsOptionalInterfaces(t *testing.T) {
	ctx := context.Background()
	for _, kind := range testStores {
		st, err := OpenStore(ctx, kind, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		w, _ := Wrap(st)
		_, f1 := st.(store.LedgerFinder)
		_, f2 := w.(store.LedgerFinder)
		_, c1 := st.(store.RunClaimer)
		_, c2 := w.(store.RunClaimer)
		if store.IsAtomic(st) != store.IsAtomic(w) || f1 != f2 || c1 != c2 {
			t.Errorf("%s: atomic %v/%v finder %v/%v claimer %v/%v", kind,
				store.IsAtomic(st), store.IsAtomic(w), f1, f2, c1, c2)
		}
		_ = st.Close()
	}
}

// TestMedian checks the median pick and the samples list.
func TestMedian(t *testing.T) {
	s := Median([]*Sample{{Seconds: 3, Steps: 3}, {Seconds: 1, Steps: 1}, {Seconds: 2, Steps: 2}})
	if s.Steps != 2 || fmt.Sprint(s.Samples) != "[1 2 3]" {
		t.Fatalf("median %+v", s)
	}
}

// TestCeilings runs each ceiling briefly.
func TestCeilings(t *testing.T) {
	if testing.Short() {
		t.Skip("touches the disk")
	}
	for _, c := range Ceilings {
		ops, err := MeasureCeiling(context.Background(), c, t.TempDir(), 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if ops <= 0 {
			t.Errorf("%s: %v ops/s", c, ops)
		}
		t.Logf("%s: %.0f ops/s", c, ops)
	}
}

// benchEnv opens a fresh store of kind for a benchmark.
func benchEnv(b *testing.B, kind string) *Env {
	b.Helper()
	env, err := NewEnv(context.Background(), kind, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	env.Store.Timed = true // for store-ns/op
	b.Cleanup(func() { _ = env.Close() })
	return env
}

// report verifies the runs (untimed) and reports steps/op and
// allocs/step.
func report(b *testing.B, env *Env, out *Outcome) {
	b.Helper()
	b.StopTimer()
	v, err := Verify(context.Background(), env, out)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(out.Steps)/float64(b.N), "steps/op")
	// Beside the rate, what a run leaves in the store (bench README): its
	// ledger records and their bytes, and its final state's bytes, as
	// Python's json.dumps writes them (the JSON line's fields).
	b.ReportMetric(float64(v.LedgerRecords)/float64(v.Runs), "records/op")
	b.ReportMetric(float64(v.LedgerBytes)/float64(v.Runs), "ledger-B/op")
	b.ReportMetric(float64(v.StateBytes)/float64(v.Runs), "state-B/op")
	if out.Steps > 0 {
		b.ReportMetric(float64(out.Mallocs)/float64(out.Steps), "allocs/step")
	}
	b.ReportMetric(float64(out.Ops.Commits())/float64(b.N), "commits/op")
	b.ReportMetric(float64(out.Ops.StoreTime.Nanoseconds())/float64(b.N), "store-ns/op")
	b.ReportMetric(float64(out.Faults)/float64(b.N), "faults/op")
}

// benchWorkload runs one b.N-run execution of a workload per store; one
// op is one run.
func benchWorkload(b *testing.B, workload string) {
	for _, kind := range testStores {
		b.Run(kind, func(b *testing.B) { benchRun(b, benchEnv(b, kind), workload) })
	}
}

// benchRun times b.N runs of workload on env, then verifies and reports.
func benchRun(b *testing.B, env *Env, workload string) {
	b.ReportAllocs()
	b.StopTimer()
	b.ResetTimer()
	out, err := Run(context.Background(), env, workload, b.N, &Stopwatch{Outer: b})
	if err != nil {
		b.Fatal(err)
	}
	report(b, env, out)
}

// BenchmarkW1Chain: start + tick of the 10-node chain; one op is one run.
func BenchmarkW1Chain(b *testing.B) { benchWorkload(b, W1Chain) }

// BenchmarkW2AskResume: start + tick (ASK_USER wait) + resume.
func BenchmarkW2AskResume(b *testing.B) { benchWorkload(b, W2AskResume) }

// BenchmarkW3WaitUntilPast: start + tick of a WAIT_UNTIL in the past.
func BenchmarkW3WaitUntilPast(b *testing.B) { benchWorkload(b, W3Past) }

// BenchmarkW3WaitUntilDue: phase A (start + tick into the wait) and phase
// B (scheduler polls) timed, the 250 ms gap between them not.
func BenchmarkW3WaitUntilDue(b *testing.B) { benchWorkload(b, W3Due) }

// BenchmarkW4LedgerRead: reading the full ledger of one W1 run; the W1
// runs are made untimed first.
func BenchmarkW4LedgerRead(b *testing.B) {
	for _, kind := range testStores {
		b.Run(kind, func(b *testing.B) {
			env := benchEnv(b, kind)
			ctx := context.Background()
			w1, err := RunW1(ctx, env, b.N, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.StopTimer()
			b.ResetTimer()
			out, err := RunW4(ctx, env, w1.RunIDs, &Stopwatch{Outer: b})
			if err != nil {
				b.Fatal(err)
			}
			report(b, env, out)
		})
	}
}

// TestPostgresStoreKind runs the workloads on the postgres kind (in CI,
// where TEST_POSTGRES_URL names the test server) and checks that every
// store the measurement opened dropped its schema.
func TestPostgresStoreKind(t *testing.T) {
	url := os.Getenv("TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("set TEST_POSTGRES_URL to a PostgreSQL database to run the postgres bench kind (CI does: .ci/postgres.sh)")
	}
	t.Setenv(PostgresURLEnv, url)
	ctx := context.Background()
	samples, err := Measure(ctx, MeasureConfig{Store: StorePostgres, Workloads: []string{W1Chain, W2AskResume, W4LedgerRead}, Runs: 5, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 3 || samples[0].CommitsPerRun != 2 || samples[2].Steps != 10 {
		t.Fatalf("samples = %+v", samples)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'agw\_bench\_%'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d bench schemas left in the database", left)
	}
}

// settleProbe is a store whose Settle records whether the workload's
// stopwatch was running.
type settleProbe struct {
	store.Store
	sw      *Stopwatch
	running []bool
}

func (p *settleProbe) Settle(ctx context.Context) error {
	p.running = append(p.running, p.sw.running)
	return nil
}

// TestSettleIsTimed checks that every workload applies what the store
// holds back on the clock, at the end of each timed phase (W3b has two).
func TestSettleIsTimed(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		workload string
		settles  int
	}{{W1Chain, 1}, {W2AskResume, 1}, {W3Past, 1}, {W3Due, 2}} {
		env, err := NewEnv(ctx, StoreMemory, "")
		if err != nil {
			t.Fatal(err)
		}
		sw := &Stopwatch{}
		probe := &settleProbe{Store: env.Store.inner, sw: sw}
		env.Store.inner = probe
		if _, err := Run(ctx, env, tc.workload, 2, sw); err != nil {
			t.Fatalf("%s: %v", tc.workload, err)
		}
		_ = env.Close()
		if len(probe.running) != tc.settles || slices.Contains(probe.running, false) {
			t.Errorf("%s: settles with the clock running: %v, want %d, all true", tc.workload, probe.running, tc.settles)
		}
	}
}
