package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// On a non-atomic store the kernel replays a completed effect from the
// ledger (runtime/execute.go: findCompleted). Through offload, the record
// it finds holds artifact refs in place of the large members of the
// result; they landed in the run's vars ({"$artifact": id} where the path
// without a failure had the text). The decorator now restores them.
func TestReplayedEffectResultIsNotARef(t *testing.T) {
	big := strings.Repeat("x", 1000)
	calls := 0
	handlers := map[durable.EffectType]runtime.Handler{
		durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls++
			return runtime.Completed(map[string]any{"content": big}), nil
		}},
	}
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": "hi"}, ResultKey: "answer"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": run.Vars["answer"]}), nil
		},
	}}
	run := tickAfterFailedCommit(t, wf, handlers, 2) // 1: STARTED record; 2: the outcome
	if calls != 1 {
		t.Fatalf("handler called %d times; the replay should reuse the recorded result", calls)
	}
	answer, _ := run.Output["answer"].(map[string]any)
	if got, _ := answer["content"].(string); got != big {
		t.Fatalf("replayed effect result in vars = %v, want the %d-byte content", answer, len(big))
	}
}

// In the gateway's stack (observe over offload over hashchain), the
// hash chain sets prev_hash/record_hash on offload's copies, and offload
// copied only Seq back to the caller's records: a subscriber got an
// offloaded record without its hashes (observe promises "the records
// exactly as stored, hashes and sequence numbers included").
func TestCallerGetsTheHashesOfOffloadedRecords(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	obs := observe.Wrap(offload.Wrap(hashchain.Wrap(inner), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100}))
	sub := obs.Subscribe("r", 4)
	defer sub.Cancel()
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted,
		Result: map[string]any{"content": strings.Repeat("x", 1000)}}
	if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	ev := <-sub.C
	if got := ev.Records[0]; got.Seq != stored[0].Seq || got.RecordHash != stored[0].RecordHash {
		t.Fatalf("event record seq %d hash %q; stored seq %d hash %q", got.Seq, got.RecordHash, stored[0].Seq, stored[0].RecordHash)
	}
}

// LedgerFindCompleted restores only the refs the decorator made of a
// result; a ref the effect itself returned (an artifact it stored, here
// text) stays a ref.
func TestFindCompletedRestoresOnlyItsOwnRefs(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	own, err := arts.Put(ctx, artifact.PutParams{Content: []byte("a document"), ContentType: "text/plain", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 100})
	big := strings.Repeat("y", 1000)
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k",
		Result: map[string]any{"own": artifact.Ref(own.ArtifactID), "big": big, "list": []any{map[string]any{"big": big}}}}
	if err := st.RunCommit(ctx, &store.CommitParams{Create: true,
		Run:     &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}},
		Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Inner().LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil || len(stored) != 1 || !artifact.IsRef(stored[0].Result.(map[string]any)["big"]) {
		t.Fatalf("stored record %+v, %v: want big offloaded", stored, err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r1", "k")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := got.Result.(map[string]any)
	if res["big"] != big {
		t.Errorf("big = %v, want the restored text", res["big"])
	}
	if inner, _ := res["list"].([]any)[0].(map[string]any); inner["big"] != big {
		t.Errorf("list[0].big = %v, want the restored text", inner["big"])
	}
	if id, ok := artifact.RefID(res["own"]); !ok || id != own.ArtifactID {
		t.Errorf("own = %v, want the effect's own ref left as it is", res["own"])
	}
}

// tickAfterFailedCommit runs wf on offload over a memory store whose
// failAt-th commit fails: the first tick must report that failure, and the
// second, replaying from the checkpoint, must complete the run.
func tickAfterFailedCommit(t *testing.T, wf *runtime.Workflow, handlers map[durable.EffectType]runtime.Handler, failAt int) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	inner := &storetest.HalfCommit{Store: memory.New(), FailAt: failAt}
	st := offload.Wrap(inner, artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: handlers})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("injected failure not returned")
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("second tick: %v, %v", run, err)
	}
	return run
}
