package offload_test

// What this file checks: Store.LedgerFindCompleted, which puts back the
// values offloading took out of a completed record's result so that a
// replayed effect writes what the effect returned into the vars, not refs
// to it (offload.go; the runtime reuses prior.Result on stores without atomic
// commits, runtime/execute.go). The ledger offloading itself matches
// Python's OffloadingLedgerStore/OffloadingRunStore on the same inputs
// (refs, artifact ids, tags, thresholds); these cases check the Go-only
// restore step.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// Offloading walks depth first: a large leaf becomes a text artifact, and
// then a container still over the threshold becomes a JSON artifact whose
// content holds the leaf's ref (spec §4.7; Python does the same). restore
// decoded that JSON artifact and returned it without restoring the refs
// inside it, so the "restored" result still held {"$artifact": id} where
// the effect returned text. Typical shape: a tool_calls result with one
// huge output and other outputs that together pass the threshold.
func TestFindCompletedRestoresRefsNestedInOffloadedJSON(t *testing.T) {
	ctx := context.Background()
	st := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	result := map[string]any{"results": []any{
		map[string]any{"output": strings.Repeat("A", 150)}, // > 100: text artifact
		map[string]any{"output": strings.Repeat("y", 60)},  // the list is still > 100: JSON artifact
	}}
	rec := &durable.StepRecord{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k1", Result: result}
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r", "k1")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v", got, err)
	}
	if !reflect.DeepEqual(got.Result, result) {
		t.Errorf("restored result = %.200v\nwant the result the effect returned (%.80v…)", got.Result, result)
	}
}

// Artifact ids are content addressed per run, so storing the same text
// again (same run) rewrites the artifact's metadata, tags included (as in
// Python). When a later record's effect payload carries the text an
// earlier result had (the answer fed into the next step), the artifact is
// re-tagged source=ledger_effect_offload, and restore, which only expanded
// refs tagged ledger_result_offload, left the earlier result's ref as
// if the effect had returned it.
func TestFindCompletedRestoresResultRetaggedByLaterPayload(t *testing.T) {
	ctx := context.Background()
	st := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	big := strings.Repeat("Z", 200)
	first := &durable.StepRecord{RunID: "r", StepID: "s1", NodeID: "a", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k1", Result: map[string]any{"content": big}}
	next := &durable.StepRecord{RunID: "r", StepID: "s2", NodeID: "b", Status: durable.StepStarted, Attempt: 1,
		IdempotencyKey: "k2", Effect: &durable.Effect{Type: "llm_call", Payload: map[string]any{"prompt": big}}}
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{first, next}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r", "k1")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v", got, err)
	}
	if c, _ := got.Result.(map[string]any)["content"].(string); c != big {
		t.Errorf("restored result content = %v, want the %d-byte text", got.Result.(map[string]any)["content"], len(big))
	}
}

// The same through the runtime: two local effects (their records wait for
// the next checkpoint), the second's payload being the first's result,
// then a non-local one whose commit appends all the records but fails to
// save the state. The next tick replays from the checkpoint and reuses the
// first effect's recorded result: the run completed with
// vars.answer.content = {"$artifact": …} instead of the text.
func TestReplayAfterLaterPayloadSharesTheContent(t *testing.T) {
	big := strings.Repeat("x", 1000)
	calls := 0
	handlers := map[durable.EffectType]runtime.Handler{
		"gen": {Local: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls++
			return runtime.Completed(map[string]any{"content": big}), nil
		}},
		"echo": {Local: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"ok": true}), nil
		}},
		durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"content": "ok"}), nil
		}},
	}
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "gen", Payload: map[string]any{}, ResultKey: "answer"}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			a, _ := run.Vars["answer"].(map[string]any)
			return runtime.Request(&durable.Effect{Type: "echo", Payload: map[string]any{"text": a["content"]}}, "c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p"}, ResultKey: "r"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	run := tickAfterFailedCommit(t, wf, handlers, 1)
	if calls != 1 {
		t.Fatalf("gen called %d times; the replay should reuse the recorded result", calls)
	}
	answer, _ := run.Vars["answer"].(map[string]any)
	if got, _ := answer["content"].(string); got != big {
		t.Errorf("replayed result in vars.answer.content = %.80v, want the %d-byte text", answer["content"], len(big))
	}
}

// A ref in a result whose artifact is gone (one the effect itself
// returned, its artifact deleted since) failed the look-up, and so the
// replay; it is now left as it is.
func TestFindCompletedKeepsDanglingRefs(t *testing.T) {
	ctx := context.Background()
	st := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	dangling := map[string]any{"$artifact": "gone-artifact-id"}
	rec := &durable.StepRecord{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k1", Result: map[string]any{"image": dangling}}
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r", "k1")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v; want the record with its ref kept", got, err)
	}
	if !reflect.DeepEqual(got.Result, map[string]any{"image": dangling}) {
		t.Errorf("result = %v, want the dangling ref kept", got.Result)
	}
}

// failingArtifacts answers every Get with err.
type failingArtifacts struct {
	artifact.Store
	err error
}

func (f failingArtifacts) Get(ctx context.Context, id string) (*artifact.Metadata, []byte, error) {
	return nil, nil, fmt.Errorf("artifact %s: %w", id, f.err)
}

// appendOffloadedResult stores a completed record whose result text is
// offloaded, and returns the offloading store.
func appendOffloadedResult(t *testing.T) (*offload.Store, artifact.Store) {
	t.Helper()
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 100})
	rec := &durable.StepRecord{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k1", Result: map[string]any{"text": strings.Repeat("A", 150), "ok": true}}
	if err := st.LedgerAppend(context.Background(), "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	return st, arts
}

// Python's find_completed_result rehydrates best effort: any resolution
// failure keeps the ref in place. A damaged offloaded artifact (a blob a
// power loss left short) failed the look-up, and with it every tick of
// the run replaying that effect; the ref is now kept.
func TestFindCompletedKeepsRefOfDamagedArtifact(t *testing.T) {
	st, arts := appendOffloadedResult(t)
	reader := offload.Wrap(st.Inner(), failingArtifacts{arts, artifact.ErrDamaged}, offload.Config{MaxInlineBytes: 100})
	got, err := reader.LedgerFindCompleted(context.Background(), "r", "k1")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted with a damaged offloaded artifact = %v, %v; want the record with the ref kept", got, err)
	}
	m, _ := got.Result.(map[string]any)
	if _, ok := artifact.RefID(m["text"]); !ok || m["ok"] != true {
		t.Errorf("result = %.200v; want text kept as the ref and ok restored as stored", got.Result)
	}
}

// An artifact store failure that is not damage (an I/O fault, perhaps
// transient) still fails the look-up: the tick is retried rather than the
// effect replayed with a ref where its value was.
func TestFindCompletedFailsOnArtifactReadError(t *testing.T) {
	st, arts := appendOffloadedResult(t)
	errIO := errors.New("disk unavailable")
	reader := offload.Wrap(st.Inner(), failingArtifacts{arts, errIO}, offload.Config{MaxInlineBytes: 100})
	if got, err := reader.LedgerFindCompleted(context.Background(), "r", "k1"); !errors.Is(err, errIO) {
		t.Fatalf("LedgerFindCompleted with a failing artifact store = %v, %v; want the read error", got, err)
	}
}

// TestFindCompletedRestoresAResultReTaggedByALaterPayload: artifact ids
// are content addressed per run, and Python's offloader (as this one did
// before it salted the id of a second source) stores a later record's
// effect payload holding the same large text as an earlier result under
// the result's id, re-tagging that artifact source=ledger_effect_offload
// (offload.Store.restore says so). The completed record's result must
// still be restored from such a ledger, not handed to the replay as a ref.
func TestFindCompletedRestoresAResultReTaggedByALaterPayload(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	inner := memory.New()
	st := offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: 100})
	text := strings.Repeat("z", 1000)
	// As the ledger and artifacts were left: the result's artifact, last
	// written by the next record's payload offload.
	id := artifact.ComputeID("r1", []byte(text))
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte(text), ContentType: "text/plain", RunID: "r1", ArtifactID: id,
		Tags: map[string]string{"source": offload.SourceLedgerEffect, "path": "ledger.effect.payload.prompt", "kind": "text"}}); err != nil {
		t.Fatal(err)
	}
	done := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepCompleted, IdempotencyKey: "k",
		Result: map[string]any{"content": artifact.Ref(id)}}
	next := &durable.StepRecord{RunID: "r1", StepID: "s2", NodeID: "b", Status: durable.StepStarted,
		Effect: &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": artifact.Ref(id)}, ResultKey: "x"}}
	if err := inner.RunCommit(ctx, &store.CommitParams{Create: true,
		Run:     &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}},
		Records: []*durable.StepRecord{done, next}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r1", "k")
	if err != nil || got == nil {
		t.Fatalf("find completed: %v, %v", got, err)
	}
	if c := got.Result.(map[string]any)["content"]; c != text {
		t.Fatalf("restored result content = %v; want the %d-byte text", c, len(text))
	}
}
