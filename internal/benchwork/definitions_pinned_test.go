package benchwork

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/runtime"
)

// TestW1ValuesAre32Bytes: every W1 node stores "x"*32 (the README's 32
// bytes per var), which the state's size depends on.
func TestW1ValuesAre32Bytes(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	out, err := RunW1(ctx, env, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.Runtime.GetState(ctx, out.RunIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k0", "k9"} {
		if st.Vars[k] != strings.Repeat("x", 32) {
			t.Errorf("vars[%s] = %q, want 32 × x", k, st.Vars[k])
		}
	}
}

// TestW3DueDeadlineIs250msAhead: W3b's wait node sets until = now_utc +
// 250 ms (the README), so the deadline is at least 250 ms after the run
// started.
func TestW3DueDeadlineIs250msAhead(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	before := time.Now()
	id, err := env.Runtime.Start(ctx, runtime.StartParams{WorkflowID: WorkflowW3Due})
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.Runtime.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
	if err != nil || st.Waiting == nil {
		t.Fatalf("tick: %v, waiting %v", err, st.Waiting)
	}
	if d := st.Waiting.Until.Sub(before); d < 250*time.Millisecond-time.Microsecond {
		t.Errorf("w3b deadline %v after the start, want at least 250ms", d)
	}
}

// TestMeasurePilotsW4AndDefaultsToFiveRuns: W4's ops_per_run comes from a
// W4 pilot (ledger reads only, no commits of W1's), and a zero Pilot
// means DefaultPilotRuns: W3b's due listings per run, which depend on the
// pilot's size, are those of a 5-run pilot.
func TestMeasurePilotsW4AndDefaultsToFiveRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs W3b waits (250 ms)")
	}
	ctx := context.Background()
	measure := func(pilot int, workloads ...string) []*Sample {
		s, err := Measure(ctx, MeasureConfig{Store: StoreMemory, Workloads: workloads, Runs: 2, Pilot: pilot, Dir: t.TempDir(), Log: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	w4 := measure(0, W4LedgerRead)
	if len(w4) != 1 || w4[0].OpsPerRun["ledger_list"] == 0 || w4[0].OpsPerRun["run_commit"] != 0 {
		t.Errorf("w4 ops_per_run %v, want ledger reads only", w4[0].OpsPerRun)
	}
	def, five := measure(0, W3Due), measure(DefaultPilotRuns, W3Due)
	if !reflect.DeepEqual(def[0].OpsPerRun, five[0].OpsPerRun) {
		t.Errorf("ops_per_run with the default pilot %v, with a %d-run pilot %v", def[0].OpsPerRun, DefaultPilotRuns, five[0].OpsPerRun)
	}
}

// TestSQLiteSharedKindOpensShared: the sqlite_shared kind opens the SQLite
// store with Config.Shared (as Python opens its database), sqlite does
// not. The store keeps it in the unexported field shared.
func TestSQLiteSharedKindOpensShared(t *testing.T) {
	ctx := context.Background()
	for kind, shared := range map[string]bool{StoreSQLiteShared: true, StoreSQLite: false} {
		st, err := OpenStore(ctx, kind, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f := reflect.ValueOf(st).Elem().FieldByName("shared")
		_ = st.Close()
		if !f.IsValid() {
			t.Fatalf("%s: the SQLite store has no shared field any more; update this test", kind)
		}
		if f.Bool() != shared {
			t.Errorf("%s store opened with shared %v, want %v", kind, f.Bool(), shared)
		}
	}
}
