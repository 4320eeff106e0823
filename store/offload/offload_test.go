package offload_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

const limit = 100

var (
	big  = strings.Repeat("B", 300)
	big2 = strings.Repeat("C", 300)
)

type testBundle struct {
	inner     *memory.Store
	artifacts *artifact.Memory
	st        *offload.Store
}

func setup(t *testing.T) testBundle {
	t.Helper()
	inner := memory.New()
	arts := artifact.NewMemory()
	return testBundle{inner: inner, artifacts: arts, st: offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: limit})}
}

func newRun(status durable.RunStatus) *durable.RunState {
	now := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return &durable.RunState{
		RunID: "run-1", WorkflowID: "wf", Status: status, CurrentNode: "n",
		Vars: map[string]any{
			"public":   big,
			"_temp":    map[string]any{"big": big, "list": []any{"a", big2}},
			"_runtime": map[string]any{"node_traces": map[string]any{"n1": []any{big + "1"}, "n2": "small"}},
			"_meta":    map[string]any{"small": "x"},
		},
		Output:    map[string]any{"answer": big + "out", "ok": true},
		CreatedAt: now, UpdatedAt: now,
	}
}

func newRecord() *durable.StepRecord {
	return &durable.StepRecord{
		RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepStatus("completed"),
		Effect: &durable.Effect{Type: durable.EffectType("llm_call"), Payload: map[string]any{"prompt": big, "model": "m"}},
		Result: map[string]any{"content": big2, "tokens": 3},
	}
}

// refTags returns the tags of the artifact v refers to and checks that
// its content is want.
func refTags(t *testing.T, b testBundle, v any, want string) map[string]string {
	t.Helper()
	id, ok := artifact.RefID(v)
	if !ok {
		t.Fatalf("not a ref: %#v", v)
	}
	m, content, err := b.artifacts.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want != "" && string(content) != want {
		t.Errorf("artifact content = %.40q…, want %.40q…", content, want)
	}
	if m.RunID != "run-1" {
		t.Errorf("artifact run = %q", m.RunID)
	}
	return m.Tags
}

func TestStore_LedgerAppend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rec := newRecord()
	small := &durable.StepRecord{RunID: "run-1", StepID: "s2", Status: durable.StepStatus("started"),
		Effect: &durable.Effect{Type: "x", Payload: map[string]any{"a": json.Number("1")}}, Result: map[string]any{"b": json.Number("2")}}
	orig := rec.Clone()
	if err := b.st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec, small}); err != nil {
		t.Fatal(err)
	}
	if rec.Seq != 1 || small.Seq != 2 {
		t.Errorf("Seq = %d, %d", rec.Seq, small.Seq)
	}
	orig.Seq = 1
	if !reflect.DeepEqual(rec, orig) {
		t.Error("caller's record mutated")
	}
	stored, err := b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("LedgerList = %d, %v", len(stored), err)
	}
	s := stored[0]
	if s.Effect.Type != "llm_call" || s.Effect.Payload["model"] != "m" {
		t.Errorf("effect = %+v", s.Effect)
	}
	tags := refTags(t, b, s.Effect.Payload["prompt"], big)
	want := map[string]string{"source": "ledger_effect_offload", "path": "ledger.effect.payload.prompt", "kind": "text"}
	if !reflect.DeepEqual(tags, want) {
		t.Errorf("effect tags = %v", tags)
	}
	res := s.Result.(map[string]any)
	tags = refTags(t, b, res["content"], big2)
	want = map[string]string{"source": "ledger_result_offload", "path": "ledger.result.content", "kind": "text"}
	if !reflect.DeepEqual(tags, want) || res["tokens"] != json.Number("3") {
		t.Errorf("result = %v, tags %v", res, tags)
	}
	if !reflect.DeepEqual(stored[1].Effect.Payload, small.Effect.Payload) || !reflect.DeepEqual(stored[1].Result, small.Result) {
		t.Errorf("small record changed: %+v", stored[1])
	}
}

func TestStore_LedgerRootsNeverReplaced(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	many := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		many[k] = "123456789"
	}
	rec := &durable.StepRecord{RunID: "run-1", StepID: "s", Status: "completed", Result: many}
	str := &durable.StepRecord{RunID: "run-1", StepID: "t", Status: "completed", Result: big}
	if err := b.st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec, str}); err != nil {
		t.Fatal(err)
	}
	stored, _ := b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if !reflect.DeepEqual(stored[0].Result, many) || stored[1].Result != big {
		t.Errorf("result roots replaced: %v / %.20v", stored[0].Result, stored[1].Result)
	}
	// The effect payload is a member of the effect object, so it may go.
	rec = &durable.StepRecord{RunID: "run-1", StepID: "u", Status: "started", Effect: &durable.Effect{Type: "x", Payload: many}}
	if err := b.st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, _ = b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1", After: 2})
	tags := refTags(t, b, stored[0].Effect.Payload, "")
	if tags["path"] != "ledger.effect.payload" || tags["kind"] != "json" {
		t.Errorf("payload tags = %v", tags)
	}
}

func TestStore_RunCommitLiveRunKept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	run := newRun(durable.RunRunning)
	rec := newRecord()
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	if run.Version != 1 || rec.Seq != 1 {
		t.Errorf("Version = %d, Seq = %d", run.Version, rec.Seq)
	}
	got, _ := b.inner.RunGet(ctx, "run-1")
	if !reflect.DeepEqual(got.Vars, newRun(durable.RunRunning).Vars) || !reflect.DeepEqual(got.Output, run.Output) {
		t.Error("live run state was offloaded")
	}
	stored, _ := b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if !artifact.IsRef(stored[0].Effect.Payload["prompt"]) {
		t.Error("record of a live run not offloaded")
	}
}

func TestStore_RunCommitTerminal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	run := newRun(durable.RunRunning)
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	run.Status = durable.RunCompleted
	before := run.Clone()
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	if run.Version != 2 {
		t.Errorf("Version = %d, want 2", run.Version)
	}
	before.Version = 2
	if !reflect.DeepEqual(run, before) {
		t.Error("caller's run mutated")
	}
	got, err := b.inner.RunGet(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vars["public"] != big {
		t.Error("public var offloaded")
	}
	if !reflect.DeepEqual(got.Vars["_meta"], run.Vars["_meta"]) {
		t.Error("_meta changed")
	}
	temp := got.Vars["_temp"].(map[string]any)
	tags := refTags(t, b, temp["big"], big)
	if !reflect.DeepEqual(tags, map[string]string{"source": "run_store_offload", "path": "vars._temp.big", "kind": "text"}) {
		t.Errorf("vars tags = %v", tags)
	}
	list := temp["list"].([]any)
	if tags := refTags(t, b, list[1], big2); tags["path"] != "vars._temp.list[1]" || list[0] != "a" {
		t.Errorf("list = %v, tags %v", list, tags)
	}
	traces := got.Vars["_runtime"].(map[string]any)["node_traces"].(map[string]any)
	if traces["n2"] != "small" {
		t.Errorf("traces = %v", traces)
	}
	if tags := refTags(t, b, traces["n1"].([]any)[0], big+"1"); tags["path"] != "vars._runtime.node_traces.n1[0]" {
		t.Errorf("trace tags = %v", tags)
	}
	tags = refTags(t, b, got.Output["answer"], big+"out")
	if !reflect.DeepEqual(tags, map[string]string{"source": "run_output_offload", "path": "output.answer", "kind": "text"}) {
		t.Errorf("output tags = %v", tags)
	}
	if got.Output["ok"] != true {
		t.Errorf("output = %v", got.Output)
	}
}

func TestStore_PrivateNamespacesStayObjects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	many := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		many[k] = "123456789"
	}
	run := newRun(durable.RunCompleted)
	run.Vars = map[string]any{"_ns": many, "_list": []any{big}}
	run.Output = many
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	got, _ := b.inner.RunGet(ctx, "run-1")
	if !reflect.DeepEqual(got.Vars["_ns"], many) {
		t.Errorf("namespace object replaced: %v", got.Vars["_ns"])
	}
	// vars._list[0] has one dot: the Python rule keeps it inline.
	if got.Vars["_list"].([]any)[0] != big {
		t.Error("vars._list[0] offloaded")
	}
	// The output root may be replaced.
	if tags := refTags(t, b, got.Output, ""); tags["path"] != "output" || tags["kind"] != "json" {
		t.Errorf("output root tags = %v", tags)
	}
	if len(got.Output) != 1 {
		t.Errorf("output = %v", got.Output)
	}
}

func TestStore_ConflictPassesThrough(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	run := newRun(durable.RunCompleted)
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	stale := run.Clone()
	stale.Version = 0
	rec := newRecord()
	err := b.st.RunCommit(ctx, &store.CommitParams{Run: stale, Records: []*durable.StepRecord{rec}})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("error = %v, want ErrConflict", err)
	}
	if stale.Version != 0 || rec.Seq != 0 {
		t.Errorf("Version = %d, Seq = %d after conflict", stale.Version, rec.Seq)
	}
	err = b.st.RunCommit(ctx, &store.CommitParams{Run: newRun(durable.RunCompleted), Create: true})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("duplicate create = %v", err)
	}
}

func TestStore_Disabled(t *testing.T) {
	t.Parallel()
	inner := memory.New()
	arts := artifact.NewMemory()
	st := offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: -1})
	ctx := context.Background()
	run := newRun(durable.RunCompleted)
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{newRecord()}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := arts.Count(ctx, artifact.SearchParams{}); n != 0 {
		t.Errorf("%d artifacts with offloading disabled", n)
	}
}

// bare hides every optional capability of the memory store.
type bare struct{ store.Store }

func TestStore_Capabilities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	if !b.st.AtomicCommit() || !store.IsAtomic(b.st) {
		t.Error("AtomicCommit hidden")
	}
	run := newRun(durable.RunRunning)
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.RunClaim(ctx, &store.RunClaimParams{RunID: "run-1", Owner: "a", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.RunClaim(ctx, &store.RunClaimParams{RunID: "run-1", Owner: "b", TTL: time.Minute}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second claim = %v", err)
	}
	if err := b.st.RunRelease(ctx, "run-1", "a"); err != nil {
		t.Error(err)
	}
	if _, err := b.st.LedgerFindCompleted(ctx, "run-1", "k"); err != nil {
		t.Error(err)
	}
	if b.st.Inner() != store.Store(b.inner) {
		t.Error("Inner")
	}

	plain := offload.Wrap(bare{memory.New()}, artifact.NewMemory(), offload.Config{})
	if plain.AtomicCommit() {
		t.Error("AtomicCommit true for a non-atomic inner store")
	}
	// Without a finder in the inner store, completed records are found by
	// reading the ledger, as every decorator does.
	done := &durable.StepRecord{RunID: "r", StepID: "s", Status: durable.StepCompleted, IdempotencyKey: "k"}
	if err := plain.LedgerAppend(ctx, "r", []*durable.StepRecord{done}); err != nil {
		t.Fatal(err)
	}
	if rec, err := plain.LedgerFindCompleted(ctx, "r", "k"); err != nil || rec == nil || rec.StepID != "s" {
		t.Errorf("LedgerFindCompleted = %+v, %v; want the completed record", rec, err)
	}
	if err := plain.RunClaim(ctx, &store.RunClaimParams{RunID: "r"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("RunClaim = %v", err)
	}
	if err := plain.RunRelease(ctx, "r", "o"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("RunRelease = %v", err)
	}
}

// failing is an artifact store whose Put always fails.
type failing struct{ *artifact.Memory }

func (failing) Put(context.Context, artifact.PutParams) (*artifact.Metadata, error) {
	return nil, errors.New("disk full")
}

func TestStore_OffloadFailureStoresInline(t *testing.T) {
	t.Parallel()
	inner := memory.New()
	st := offload.Wrap(inner, failing{artifact.NewMemory()}, offload.Config{MaxInlineBytes: limit})
	ctx := context.Background()
	rec := newRecord()
	if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, _ := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if stored[0].Effect.Payload["prompt"] != big || rec.Seq != 1 {
		t.Errorf("stored = %+v", stored[0])
	}
}

// Ids are content addressed per run, so two private namespaces holding the
// same large text share one artifact whose "path" tag is the one stored
// last. The vars were walked in Go's random map order, so the tag flipped
// between vars._a.x and vars._b.x from one save of the same state to the
// next; they are now walked in key order (Python: insertion order).
func TestStore_SharedVarsArtifactTagIsDeterministic(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("Z", 150)
	seen := map[string]bool{}
	for range 40 {
		arts := artifact.NewMemory()
		st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 100})
		run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunCompleted, CurrentNode: "n",
			Vars: map[string]any{"_a": map[string]any{"x": big}, "_b": map[string]any{"x": big}}}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
			t.Fatal(err)
		}
		m, err := arts.Metadata(ctx, artifact.ComputeID("r", []byte(big)))
		if err != nil {
			t.Fatal(err)
		}
		seen[m.Tags["path"]] = true
	}
	if len(seen) != 1 {
		t.Errorf("path tag of the shared artifact over 40 identical saves: %v; want one value", seen)
	}
}
