package runtime_test

// An effect attempt's end record (completed, waiting or failed, spec
// runtime-model.md §2 ledger table) left durable without its state by a
// kill on the JSON-file store (it appends a commit's records before it
// writes the run file). A waiting end is the attempt's outcome as a
// completed one is: the replay reuses it. A failed end spends one of the
// retry policy's attempts: the replay goes on with the next, or fails the
// run when none is left.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// killAndReplay starts a run of a one-effect workflow (effect typ,
// handled by h), kills the first tick at the commit of an end record of
// status end, and ticks the run in a new process on the same directory.
// It returns the run after the replay and its ledger.
func killAndReplay(t *testing.T, end durable.StepStatus, typ durable.EffectType, h runtime.Handler, policy ...runtime.EffectPolicy) (*durable.RunState, []*durable.StepRecord) {
	t.Helper()
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: typ, ResultKey: "r",
				Payload: map[string]any{"prompt": "go?"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	newRuntime := func(st store.Store) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		cfg := runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{typ: h}}
		if len(policy) > 0 {
			cfg.Policy = policy[0]
		}
		rt, err := runtime.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	run, id, js2 := replayAfterKill(t, newRuntime, func(r *durable.StepRecord) bool { return r.Status == end && r.Effect != nil })
	recs, err := js2.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	return run, recs
}

// replayAfterKill starts workflow "w" on the runtime newRuntime makes over
// a JSON-file store in a fresh directory, kills the first tick at the
// commit of a record at picks, and ticks the run once on a new runtime
// over the directory reopened. It returns the run after that replay, its
// id and the reopened store.
func replayAfterKill(t *testing.T, newRuntime func(store.Store) *runtime.Runtime, at func(*durable.StepRecord) bool) (*durable.RunState, string, *jsonfile.Store) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(&jsonKillStore{Store: js, at: at})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	js2 := killTickAndReopen(t, rt, id, js, dir)
	run, err := newRuntime(js2).Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return run, id, js2
}

// countStatus counts the ledger records of effect typ with status st.
func countStatus(recs []*durable.StepRecord, typ durable.EffectType, st durable.StepStatus) int {
	n := 0
	for _, r := range recs {
		if r.Status == st && r.Effect != nil && r.Effect.Type == typ {
			n++
		}
	}
	return n
}

// TestWaitingEndReusedAfterKill: a handler that submits a job and waits
// for it (external) or asks a person (local) is not called again once its
// waiting end is durable; the replay waits as recorded and the ledger
// keeps one STARTED and one WAITING record.
func TestWaitingEndReusedAfterKill(t *testing.T) {
	for _, local := range []bool{false, true} {
		name := map[bool]string{false: "external", true: "local"}[local]
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			h := runtime.Handler{Local: local, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				n := calls.Add(1)
				return runtime.Waiting(&durable.WaitState{Reason: durable.WaitJob, WaitKey: "job:" + req.IdempotencyKey,
					ResumeToNode: req.ResumeTarget(), ResultKey: req.Effect.ResultKey,
					Details: map[string]any{"call": int64(n)}}), nil
			}}
			run, recs := killAndReplay(t, durable.StepWaiting, "submit", h)
			if got := calls.Load(); got != 1 {
				t.Errorf("handler called %d times, want 1", got)
			}
			if run.Status != durable.RunWaiting || run.Waiting == nil || run.Waiting.Reason != durable.WaitJob {
				t.Fatalf("after the replay: status %s, waiting %+v; want waiting on the job", run.Status, run.Waiting)
			}
			if c := fmt.Sprint(run.Waiting.Details["call"]); c != "1" {
				t.Errorf("wait details %v, want those of the recorded wait (call 1)", run.Waiting.Details)
			}
			if s, w := countStatus(recs, "submit", durable.StepStarted), countStatus(recs, "submit", durable.StepWaiting); s != 1 || w != 1 {
				t.Errorf("ledger holds %d STARTED and %d WAITING records of the effect, want 1 and 1", s, w)
			}
		})
	}
}

// TestFailedEndRetriedAfterKill: a durable failed end of the only attempt
// the policy allows fails the replayed run without a new call; with two
// attempts allowed, the replay makes attempt 2.
func TestFailedEndRetriedAfterKill(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    runtime.EffectPolicy
		wantCalls int32
		complete  bool
	}{
		{"no retry left", runtime.NoRetry, 1, false},
		{"a retry left", runtime.RetryPolicy{DefaultAttempts: 2, Base: -1}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				if calls.Add(1) == 1 {
					return runtime.Failed("transient"), nil
				}
				return runtime.Completed(map[string]any{"ok": true, "attempt": req.Attempt}), nil
			}}
			run, recs := killAndReplay(t, durable.StepFailed, "call", h, tc.policy)
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("handler called %d times, want %d", got, tc.wantCalls)
			}
			if tc.complete {
				mustComplete(t, run)
				if a := fmt.Sprint(run.Vars["r"].(map[string]any)["attempt"]); a != "2" {
					t.Errorf("the replay's attempt is %s, want 2 (the one after the failed)", a)
				}
			} else if run.Status != durable.RunFailed || run.Error != "Effect failed after 1 attempts: transient" {
				t.Errorf("run %s (%q), want failed with its only attempt's error", run.Status, run.Error)
			}
			if n := countStatus(recs, "call", durable.StepFailed); n != 1 {
				t.Errorf("ledger holds %d FAILED records, want 1", n)
			}
		})
	}
}

// TestWaitingEndReusedAfterKillPastRecordsOthersAppended: the records
// others append to the ledger between the kill and the replay (here 20,
// fewer than the tail the replay reads) do not hide the waiting end: the
// handler is not called again. A replay that read too short a tail would
// miss the end and submit the job a second time.
func TestWaitingEndReusedAfterKillPastRecordsOthersAppended(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Waiting(&durable.WaitState{Reason: durable.WaitJob, WaitKey: "job:" + req.IdempotencyKey,
			ResumeToNode: req.ResumeTarget(), ResultKey: req.Effect.ResultKey}), nil
	}}
	wf := &runtime.Workflow{ID: "w", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "submit", ResultKey: "r", Payload: map[string]any{"job": "j"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	newRuntime := func(st store.Store) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{"submit": h}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(&jsonKillStore{Store: js, at: func(r *durable.StepRecord) bool { return r.Status == durable.StepWaiting && r.Effect != nil }})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	js2 := killTickAndReopen(t, rt, id, js, dir)
	var others []*durable.StepRecord
	for i := range 20 {
		others = append(others, &durable.StepRecord{StepID: fmt.Sprintf("other-%d", i), RunID: id, NodeID: "elsewhere",
			Status: durable.StepCompleted, Effect: &durable.Effect{Type: "note", Payload: map[string]any{}},
			Attempt: 1, IdempotencyKey: fmt.Sprintf("other-key-%d", i), Result: map[string]any{"i": int64(i)}})
	}
	if err := js2.LedgerAppend(ctx, id, others); err != nil {
		t.Fatal(err)
	}
	run, err := newRuntime(js2).Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("handler called %d times, want 1 (the durable waiting end reused)", got)
	}
	if run.Status != durable.RunWaiting || run.Waiting == nil || run.Waiting.Reason != durable.WaitJob {
		t.Fatalf("after the replay: status %s, waiting %+v; want waiting on the job", run.Status, run.Waiting)
	}
}
