package history_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// snapshotDoc and its canonical text: keys sorted, compact, non-ASCII raw.
var (
	snapshotDoc = map[string]any{
		"name":  "café <flow>",
		"nodes": []any{map[string]any{"id": "b", "type": "ask"}, map[string]any{"id": "a"}},
		"b":     1,
	}
	snapshotText = `{"b":1,"name":"café <flow>","nodes":[{"id":"b","type":"ask"},{"id":"a"}]}`
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestPersistWorkflowSnapshot(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	rt := newRuntime(t, st, arts, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "asker"})
	before, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 8, 9, 10, 11, 0, time.UTC)

	ref, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{
		RunID: id, WorkflowID: " asker ", Snapshot: snapshotDoc, Format: "visualflow",
		Now: func() time.Time { return at },
	})
	if err != nil {
		t.Fatal(err)
	}
	metas, err := arts.ListByRun(ctx, id)
	if err != nil || len(metas) != 1 {
		t.Fatalf("run artifacts %v %v", metas, err)
	}
	want := map[string]any{"workflow_id": "asker", "format": "visualflow", "sha256": sha(snapshotText),
		"artifact_id": metas[0].ArtifactID, "created_at": "2026-07-08T09:10:11+00:00"}
	if !reflect.DeepEqual(ref, want) {
		t.Fatalf("ref\n got %v\nwant %v", ref, want)
	}
	meta, content, err := arts.Get(ctx, metas[0].ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	if string(content) != snapshotText || meta.ContentType != "application/json" || !reflect.DeepEqual(meta.Tags,
		map[string]string{"kind": "workflow_snapshot", "workflow_id": "asker", "format": "visualflow", "sha256": sha(snapshotText)}) {
		t.Fatalf("artifact %s tags %v content %s", meta.ContentType, meta.Tags, content)
	}
	if meta.Descriptor.SemanticKind != "workflow_snapshot" {
		t.Fatalf("semantic kind %q", meta.Descriptor.SemanticKind)
	}

	// The ref is in the stored run; the run is otherwise untouched.
	after, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Vars["_runtime"].(map[string]any)["workflow_snapshot"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("stored ref %v", got)
	}
	if after.UpdatedAt != before.UpdatedAt || after.Status != before.Status || after.Version != before.Version+1 {
		t.Fatalf("run changed: updated_at %v→%v status %s→%s version %d→%d",
			before.UpdatedAt, after.UpdatedAt, before.Status, after.Status, before.Version, after.Version)
	}
	if _, still := after.Vars["_runtime"].(map[string]any)["node_traces"]; !still {
		t.Fatal("the rest of vars._runtime was lost")
	}

	// Idempotent: a second call returns the stored ref and writes nothing.
	again, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{
		RunID: id, WorkflowID: "other", Snapshot: map[string]any{"x": 1}})
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("second call: %v %v", again, err)
	}
	if metas, _ := arts.ListByRun(ctx, id); len(metas) != 1 {
		t.Fatalf("%d artifacts after the second call", len(metas))
	}
	if r, _ := st.RunGet(ctx, id); r.Version != after.Version {
		t.Fatal("the second call saved the run")
	}

	// The bundle carries the ref; the snapshot is listed among the run's
	// artifacts.
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, id, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b["workflow_snapshot"], want) {
		t.Fatalf("bundle workflow_snapshot %v", b["workflow_snapshot"])
	}
	sums := list(t, ledgerOf(t, b, id)["artifacts"], "artifacts")
	if len(sums) != 1 || obj(t, obj(t, sums[0], "summary")["tags"], "tags")["kind"] != "workflow_snapshot" {
		t.Fatalf("artifact summaries %v", sums)
	}
}

func TestPersistWorkflowSnapshotErrors(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	rt := newRuntime(t, st, arts, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "job"})

	_, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{RunID: "ghost", WorkflowID: "w", Snapshot: snapshotDoc})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"ghost"`) {
		t.Fatalf("unknown run: %v", err)
	}
	for _, tc := range []struct {
		p    history.SnapshotParams
		want string
	}{
		{history.SnapshotParams{WorkflowID: "w", Snapshot: snapshotDoc}, "run id is required"},
		{history.SnapshotParams{RunID: id, WorkflowID: " ", Snapshot: snapshotDoc}, "workflow id is required"},
		{history.SnapshotParams{RunID: id, WorkflowID: "w"}, "snapshot is required"},
		{history.SnapshotParams{RunID: id, WorkflowID: "w", Snapshot: map[string]any{"bad": make(chan int)}}, "encoding snapshot"},
	} {
		if _, err := history.PersistWorkflowSnapshot(ctx, st, arts, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%+v: error %v, want %q", tc.p, err, tc.want)
		}
	}
	if metas, _ := arts.ListByRun(ctx, id); len(metas) != 0 {
		t.Fatalf("failed calls stored %d artifacts", len(metas))
	}

	// A format left empty is "unknown".
	ref, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{RunID: id, WorkflowID: "job", Snapshot: map[string]any{}})
	if err != nil || ref["format"] != "unknown" || ref["sha256"] != sha("{}") {
		t.Fatalf("default format: %v %v", ref, err)
	}
}

// A snapshot recorded while a tick of the run is inside an effect (an LLM
// call takes seconds) must not make the tick's commit conflict: the
// effect's outcome would be dropped and the effect run again. With
// SnapshotParams.Host the ref is saved under the run's lock, after the
// tick.
func TestPersistWorkflowSnapshotDuringTickWaitsForIt(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	var (
		rt      *runtime.Runtime
		runID   string
		calls   int
		snapErr error
		done    = make(chan struct{})
	)
	reg, err := runtime.NewRegistry(wf("w", "a", map[string]runtime.NodeFunc{
		"a": node(func(*durable.RunState) runtime.StepPlan {
			return runtime.Request(effect(durable.EffectLLMCall, map[string]any{"prompt": "p"}, "_temp.llm"), "b")
		}),
		"b": complete(map[string]any{"answer": "ok"}),
	}))
	if err != nil {
		t.Fatal(err)
	}
	rt, err = runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts,
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls++
			if calls == 1 {
				// The host records the snapshot while the runner waits
				// for the model. Saved directly, it would be done at
				// once; through the runtime it waits for this tick.
				go func() {
					defer close(done)
					_, snapErr = history.PersistWorkflowSnapshot(context.Background(), st, arts, history.SnapshotParams{
						RunID: runID, WorkflowID: "w", Snapshot: snapshotDoc, Format: "visualflow", Host: rt})
				}()
				select {
				case <-done:
				case <-time.After(200 * time.Millisecond):
				}
			}
			return runtime.Completed(map[string]any{"content": "reply"}), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	runID, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, runID, runtime.TickOptions{}); err != nil {
		t.Errorf("tick failed because the snapshot ref was committed meanwhile: %v", err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("snapshot not saved after the tick")
	}
	if snapErr != nil {
		t.Fatalf("PersistWorkflowSnapshot: %v", snapErr)
	}
	if calls != 1 {
		t.Errorf("LLM effect executed %d times, want 1", calls)
	}
	r := state(t, rt, runID)
	if r.Status != durable.RunCompleted {
		t.Errorf("run status %s", r.Status)
	}
	ref, _ := r.Vars["_runtime"].(map[string]any)["workflow_snapshot"].(map[string]any)
	if ref["sha256"] != sha(snapshotText) {
		t.Errorf("snapshot ref %v", ref)
	}
}

// countedDoc counts its JSON encodings.
type countedDoc struct{ n *int }

func (d countedDoc) MarshalJSON() ([]byte, error) {
	*d.n++
	return []byte(`{"nodes":[1,2,3]}`), nil
}

// PersistWorkflowSnapshot encoded the snapshot canonically to hash it,
// then artifact.PutJSON encoded it again to store the very same canonical
// bytes (compat doc: the artifact's bytes are the canonical JSON the
// sha256 tag hashes). A VisualFlow document was encoded twice; the bytes
// already made are now stored with artifact Put (content type
// application/json).
func TestSnapshotEncodedOnce(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	at := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	putRunAsIs(t, st, &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunRunning, CreatedAt: at, UpdatedAt: at})
	n := 0
	ref, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{
		RunID: "r1", WorkflowID: "job", Snapshot: map[string]any{"flow": countedDoc{&n}}})
	if err != nil {
		t.Fatal(err)
	}
	_, content, err := arts.Get(ctx, ref["artifact_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"flow":{"nodes":[1,2,3]}}`; string(content) != want || ref["sha256"] != sha(want) {
		t.Fatalf("stored %s sha %v", content, ref["sha256"])
	}
	if n != 1 {
		t.Fatalf("the snapshot was encoded %d times, want once", n)
	}
}
