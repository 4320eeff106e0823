package benchwork

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// TestJSONBytesUsePythonSeparators: the README's "ledger JSON B" and
// "final state JSON B" (W1: 1132 and 1100), and the peer harness
// (bench/peer/bench.py verify: len(json.dumps(asdict(run))),
// len(json.dumps(r))), size records and states with json.dumps' default
// separators ", " and ": ". Verify sized them with "," and ":" instead, so
// state_json_bytes and ledger_bytes_per_run were ~7 % smaller than
// Python's figure for the same content (Python's own W1 state is 1100 B
// with the default separators and 1027 B compact).
func TestJSONBytesUsePythonSeparators(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	const n = 3
	out, err := RunW1(ctx, env, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verify(ctx, env, out)
	if err != nil {
		t.Fatal(err)
	}
	pyDefault := pyjson.Style{} // json.dumps defaults: ", " and ": "
	var wantState, wantLedger int64
	for _, id := range out.RunIDs {
		st, err := env.Runtime.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := durable.MarshalRun(st, pyDefault)
		if err != nil {
			t.Fatal(err)
		}
		wantState += int64(len(b))
		recs, err := env.Runtime.GetLedger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			b, err := durable.MarshalRecord(r, pyDefault)
			if err != nil {
				t.Fatal(err)
			}
			wantLedger += int64(len(b))
		}
	}
	t.Logf("W1 per run: state %d B (Python-style %d B, README 1100), ledger %d B (Python-style %d B, README 1132)",
		v.StateBytes/n, wantState/n, v.LedgerBytes/n, wantLedger/n)
	if v.StateBytes != wantState {
		t.Errorf("state_json_bytes sized with compact separators: %d B/run, json.dumps default (as the README/peer) gives %d B/run",
			v.StateBytes/n, wantState/n)
	}
	if v.LedgerBytes != wantLedger {
		t.Errorf("ledger_bytes_per_run sized with compact separators: %d B/run, json.dumps default gives %d B/run",
			v.LedgerBytes/n, wantLedger/n)
	}
}

// TestVerifyChecksMeasuredSteps: steps are counted inside the
// handlers so that they are measured, and the peer harness fails a sample
// whose count is not the workload's (bench.py: require(steps == 2 * n),
// require(steps == 10 * n)). Verify never compared Outcome.Steps with
// StepsPerRun × runs (only W4's), so a kernel that executed a node twice
// (a replayed node) would still have got a steps_per_s printed, inflated.
func TestVerifyChecksMeasuredSteps(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	const n = 3
	out, err := RunW2(ctx, env, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Steps != StepsPerRun(W2AskResume)*n {
		t.Fatalf("setup: %d steps", out.Steps)
	}
	out.Steps++ // one node executed twice
	if _, err := Verify(ctx, env, out); err == nil {
		t.Errorf("Verify passed an outcome with %d steps for %d W2 runs (want %d): steps are not checked",
			out.Steps, n, StepsPerRun(W2AskResume)*n)
	}
}

// memoryEnv opens an in-memory bench environment, closed with the test.
func memoryEnv(t *testing.T) *Env {
	t.Helper()
	env, err := NewEnv(context.Background(), StoreMemory, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	return env
}
