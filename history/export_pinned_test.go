package history_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// exportAt is the creation time of the runs of these tests.
var exportAt = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

// exportSession exports run id of st with its session section and returns
// the session's turns.
func exportSession(t *testing.T, st *memory.Store, id string) []any {
	t.Helper()
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, id, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	return list(t, obj(t, b["session"], "session")["turns"], "turns")
}

// Spec §6.2: workflow_snapshot is the ref only when its artifact_id is
// non-blank (Python: str(ws.get("artifact_id") or "").strip()); a ref
// whose artifact_id is only spaces is exported as null.
func TestBundleDropsSnapshotRefWithBlankArtifactID(t *testing.T) {
	st := memory.New()
	r := completedRun("r1", "", exportAt)
	r.Vars = map[string]any{"_runtime": map[string]any{"workflow_snapshot": map[string]any{
		"workflow_id": "w", "format": "visualflow", "artifact_id": "   "}}}
	putRunAsIs(t, st, r)
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, "r1", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b["workflow_snapshot"] != nil {
		t.Fatalf("workflow_snapshot = %v, want null for a blank artifact_id", b["workflow_snapshot"])
	}
}

// Options.MaxInlineBytes negative disables the offloading of input_data:
// a value past the default threshold (262144 bytes) stays inline even
// with an artifact store.
func TestExportNegativeMaxInlineBytesKeepsInputInline(t *testing.T) {
	st := memory.New()
	big := strings.Repeat("b", artifact.DefaultMaxInlineBytes+1000)
	r := completedRun("r1", "", exportAt)
	r.Vars = map[string]any{"big": big}
	putRunAsIs(t, st, r)
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st, Artifacts: artifact.NewMemory()},
		"r1", history.Options{MaxInlineBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj(t, b["input_data"], "input_data")["big"]; got != big {
		t.Fatalf("input_data.big is %T, want the value inline (offloading disabled)", got)
	}
}

// Session turns created in the same millisecond come in run id order, the
// order that keeps them consistent with which of them the turn limit
// keeps (the newest by (time, run id)).
func TestSessionTurnsSameInstantInRunIDOrder(t *testing.T) {
	st := memory.New()
	for _, id := range []string{"r-b", "r-a", "r-c"} {
		r := completedRun(id, "", exportAt)
		r.SessionID = "s1"
		r.Vars = map[string]any{"prompt": id}
		putRunAsIs(t, st, r)
	}
	var got []any
	for _, tr := range exportSession(t, st, "r-c") {
		got = append(got, obj(t, tr, "turn")["run_id"])
	}
	if len(got) != 3 || got[0] != "r-a" || got[1] != "r-b" || got[2] != "r-c" {
		t.Fatalf("turns %v, want [r-a r-b r-c]", got)
	}
}

// A turn's answer_meta falls back to the nested result/output envelope's
// meta when the output has none at its top (Python
// _extract_answer_from_run_output).
func TestSessionAnswerMetaFromNestedResult(t *testing.T) {
	st := memory.New()
	r := completedRun("r1", "", exportAt)
	r.SessionID = "s1"
	r.Output = map[string]any{"result": map[string]any{"answer": "yes", "meta": map[string]any{"model": "m"}}}
	putRunAsIs(t, st, r)
	turns := exportSession(t, st, "r1")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	turn := obj(t, turns[0], "turn")
	if turn["answer"] != "yes" {
		t.Fatalf("answer %v, want yes", turn["answer"])
	}
	if meta, _ := turn["answer_meta"].(map[string]any); meta["model"] != "m" {
		t.Fatalf("answer_meta %v, want the nested meta {model: m}", turn["answer_meta"])
	}
}

// A turn's stats count the non-null entries of a completed TOOL_CALLS
// record's tool_calls (Python: `c is not None`): a null entry is no call.
func TestSessionStatsSkipNullToolCalls(t *testing.T) {
	st := memory.New()
	r := completedRun("r1", "", exportAt)
	r.SessionID = "s1"
	rec := &durable.StepRecord{RunID: "r1", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		StartedAt: durable.NewTime(exportAt), EndedAt: durable.NewTime(exportAt),
		Effect: &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": "a"}, nil, "b"}}},
		Result: map[string]any{"results": []any{}}}
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	turns := exportSession(t, st, "r1")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	stats := obj(t, obj(t, turns[0], "turn")["stats"], "stats")
	if n := num(t, stats["tool_calls"], "tool_calls"); n != 2 {
		t.Fatalf("tool_calls = %d, want 2 (the null entry is not a call)", n)
	}
}

// A turn's created_at/updated_at texts are trimmed, as Python's
// `str(x or "").strip() or None` writes them.
func TestSessionTurnTrimsTimeText(t *testing.T) {
	run, err := durable.UnmarshalRunString(`{"run_id": "r1", "workflow_id": "w", "status": "completed",
		"current_node": "n", "vars": {"prompt": "hi"}, "waiting": null, "output": {"answer": "yo"},
		"error": null, "created_at": " yesterday ", "updated_at": "today\t",
		"actor_id": null, "session_id": "s1", "parent_run_id": null}`)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	putRunAsIs(t, st, run)
	turns := exportSession(t, st, "r1")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	turn := obj(t, turns[0], "turn")
	if turn["created_at"] != "yesterday" || turn["updated_at"] != "today" {
		t.Fatalf("created_at %q, updated_at %q; want them trimmed", turn["created_at"], turn["updated_at"])
	}
}

// resolveOutput reads back only the run's output-offload artifacts (tag
// source=run_output_offload): an answer member that is a ref to another
// artifact of the run (a file the run produced) stays a ref, so the turn
// has no answer rather than that file's content.
func TestSessionAnswerIgnoresUntaggedArtifactRef(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte("file body"), ContentType: "text/plain",
		RunID: "r1", ArtifactID: "user_file"}); err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	r := completedRun("r1", "", exportAt)
	r.SessionID = "s1"
	r.Output = map[string]any{"answer": map[string]any{"$artifact": "user_file"}}
	putRunAsIs(t, st, r)
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, "r1", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	if got := obj(t, turns[0], "turn")["answer"]; got != nil {
		t.Fatalf("answer = %v, want null: the ref is not an output-offload artifact", got)
	}
}
