package runtime_test

// Edge cases of run control (Start, Tick, Pause/ResumeRun, Cancel, limits,
// retries, idempotency keys), each checked against the promise it quotes.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// slowEffectWorkflow is one external effect ("slow") at node a, then done.
func slowEffectWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "slowwf", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "slow", Payload: map[string]any{"q": "x"}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// Cancel documents (docs/compatibility.md, "cancel") that an attempt left
// open by a runner that died is recorded "cancelled". cancelOnce looks for
// such an attempt only when the run is "running": a run whose runner died
// mid-effect and that a host then paused (Pause turns a running run into
// a pause wait, keeping the plan in flight) is "waiting" when cancelled, so
// its open STARTED attempt is never ended.
func TestCancelOfPausedRunEndsTheAttemptLeftOpen(t *testing.T) {
	f := setup(t, slowEffectWorkflow())
	started := make(chan struct{}, 1)
	f.rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		started <- struct{}{}
		<-ctx.Done() // the runner goes away mid-call
		return runtime.Outcome{}, ctx.Err()
	}})
	bg := context.Background()
	id, err := f.rt.Start(bg, runtime.StartParams{WorkflowID: "slowwf"})
	if err != nil {
		t.Fatal(err)
	}
	tctx, stop := context.WithCancel(bg)
	go func() { <-started; stop() }()
	if _, err := f.rt.Tick(tctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("tick interrupted mid-effect returned no error")
	}
	// The ledger now holds the attempt's STARTED record and no end, the run
	// is running at node a (as after a crash).
	if _, err := f.rt.Pause(bg, id, "ops"); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Cancel(bg, id, "stop")
	if err != nil || st.Status != durable.RunCancelled {
		t.Fatalf("cancel: %v %v", st, err)
	}
	recs, _ := f.rt.GetLedger(bg, id)
	open := map[string]bool{}
	for _, r := range recs {
		if r.Effect == nil || r.Effect.Type != "slow" {
			continue
		}
		if r.Status == durable.StepStarted {
			open[r.StepID] = true
		} else {
			delete(open, r.StepID)
		}
	}
	if len(open) != 0 {
		t.Fatalf("ledger %s: the attempt left open is still open after Cancel; want it recorded cancelled as for a running run",
			statuses(t, f, id))
	}
}

// crashAfterRecords is a store without atomic commits (as the JSON-file
// store) that, once armed, "crashes" in the commit carrying a completed
// tool_calls record: the records reach the ledger, the state does not.
type crashAfterRecords struct {
	store.Wrapper
	armed atomic.Bool
}

func (s *crashAfterRecords) AtomicCommit() bool { return false }

func (s *crashAfterRecords) RunCommit(ctx context.Context, p *store.CommitParams) error {
	for _, r := range p.Records {
		if r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == durable.EffectToolCalls &&
			s.armed.CompareAndSwap(true, false) {
			if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
				return err
			}
			return errors.New("process killed before the state was saved")
		}
	}
	return s.Store.RunCommit(ctx, p)
}

// A TOOL_CALLS payload built with typed Go containers ([]map[string]any
// calls, a []string allowlist: values the encoder and every store accept)
// is not normalised by normalizePayload, which only looks at []any: its
// key holds the call ids and the allowlist order. The same plan read back
// from the checkpoint taken while it was in flight holds []any, so the
// replay after a crash computes another key, misses the completed record
// and executes the tool calls a second time (spec §2.11: "after COMPLETED
// appended, before save ... prior result reused, no new records"). The
// runtime call ids (rtcall_<key>_<i>) are not assigned at all.
func TestTypedToolCallsPayloadKeyStableAcrossReplay(t *testing.T) {
	wf := &runtime.Workflow{ID: "tools", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
				"tool_calls":    []map[string]any{{"name": "write_file", "arguments": map[string]any{"path": "a.txt"}, "call_id": "c1"}},
				"allowed_tools": []string{"write_file", "read_file"},
			}, ResultKey: "r"}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	st := &crashAfterRecords{Wrapper: store.Wrapper{Store: memory.New()}}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	var keys []string
	rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		keys = append(keys, req.IdempotencyKey)
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("the crashing commit gave no error")
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{}) // the restart
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("restart: %v %v", got, err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("tool calls executed %d times (keys %v); want once: the restart must reuse the completed result", n, keys)
	}
}

// Spec §2.9's third test vector, with the calls and the allowlist built as
// typed Go containers (which pyjson encodes as the same JSON lists): the
// key must be the vector's, as for []any.
func TestTypedToolCallsKeyMatchesSpecVector(t *testing.T) {
	eff := &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
		"tool_calls":    []map[string]any{{"name": " read_file ", "arguments": `{"file_path": "a.txt"}`, "call_id": "abc"}},
		"allowed_tools": []string{"write_file", "read_file", "read_file"},
	}}
	if got, want := runtime.PythonIdempotencyKey("run-1", "tools", eff), "3cc3b4a58e2edd4b1da34b5c57319b43"; got != want {
		t.Fatalf("key of a typed TOOL_CALLS payload = %s, want the spec's %s (call ids and allowlist order must not count)", got, want)
	}
}
