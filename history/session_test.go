package history_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func messages(msgs ...map[string]any) map[string]any {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = m
	}
	return map[string]any{"messages": list}
}

func user(content string) map[string]any { return map[string]any{"role": "user", "content": content} }

// spanMS is the span of a run tree's records in whole milliseconds: the
// earliest to the latest of each record's end (its start when it has
// none).
func spanMS(t *testing.T, st store.LedgerStore, runIDs ...string) int64 {
	t.Helper()
	var lo, hi int64
	for _, id := range runIDs {
		recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			at := r.EndedAt
			if at.IsZero() {
				at = r.StartedAt
			}
			ms := at.UnixMilli()
			if lo == 0 || ms < lo {
				lo = ms
			}
			hi = max(hi, ms)
		}
	}
	return hi - lo
}

// A session with chat turns: only chat turns are listed, internal runs
// and runs after the exported one are not, other sessions are not, and
// each turn carries its prompt, answer and the cost of its run tree.
func TestExportSessionChatTurns(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	rt := newRuntime(t, st, arts, newClock())
	startTick(t, rt, runtime.StartParams{WorkflowID: "__internal__", SessionID: "s1"})
	startTick(t, rt, runtime.StartParams{WorkflowID: "job", SessionID: "s1", Vars: map[string]any{"task": "summarise"}})
	chat1 := startTick(t, rt, runtime.StartParams{WorkflowID: "chat_answer", SessionID: "s1",
		Vars: map[string]any{"context": messages(user("hello"))}})
	startTick(t, rt, runtime.StartParams{WorkflowID: "chat_answer", SessionID: "s2",
		Vars: map[string]any{"context": messages(user("elsewhere"))}})
	last := user("<runtime_metadata>{\"client\": \"web\"}</runtime_metadata>\n second question ")
	last["metadata"] = map[string]any{"runtime_metadata": map[string]any{"lang": "en", "blank": " ", "none": nil}}
	ctx2 := messages(user("hello"), map[string]any{"role": "assistant", "content": "hi there"}, last)
	ctx2["attachments"] = []any{map[string]any{"$artifact": "a1", "filename": "f.txt"}, "not an object"}
	chat2 := startTick(t, rt, runtime.StartParams{WorkflowID: "chat", SessionID: "s1", Vars: map[string]any{"context": ctx2}})
	startTick(t, rt, runtime.StartParams{WorkflowID: "chat_answer", SessionID: "s1",
		Vars: map[string]any{"context": messages(user("later"))}})
	helper := children(t, st, chat2)
	if len(helper) != 1 {
		t.Fatalf("chat children %v", helper)
	}
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte("made by the helper"), RunID: helper[0], ArtifactID: "helper_art"}); err != nil {
		t.Fatal(err)
	}

	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, chat2, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	session := obj(t, b["session"], "session")
	if session["session_id"] != "s1" {
		t.Fatalf("session id %v", session["session_id"])
	}
	turns := list(t, session["turns"], "turns")
	if len(turns) != 2 {
		t.Fatalf("%d turns: %v", len(turns), turns)
	}
	t1, t2 := obj(t, turns[0], "turn 1"), obj(t, turns[1], "turn 2")
	if got := keys(t2); !reflect.DeepEqual(got, []string{"answer", "answer_meta", "artifacts", "attachments", "created_at",
		"kind", "prompt", "prompt_metadata", "run_id", "stats", "status", "updated_at", "workflow_id"}) {
		t.Fatalf("turn keys %v", got)
	}

	run1 := state(t, rt, chat1)
	want1 := map[string]any{
		"run_id": chat1, "workflow_id": "chat_answer", "kind": "chat", "status": "completed",
		"created_at": run1.CreatedAt.String(), "updated_at": run1.UpdatedAt.String(),
		"prompt": "hello", "prompt_metadata": nil, "attachments": []any{},
		"answer": "hi there", "answer_meta": nil, // from the ANSWER_USER record
		"stats": map[string]any{
			"duration_ms": json.Number(strconv.FormatInt(spanMS(t, st, chat1), 10)), "llm_calls": json.Number("0"), "tool_calls": json.Number("0"),
			"usage": map[string]any{"input_tokens": json.Number("0"), "output_tokens": json.Number("0"), "total_tokens": json.Number("0")},
			"tok_s": nil,
		},
		"artifacts": []any{},
	}
	if !reflect.DeepEqual(t1, want1) {
		t.Fatalf("turn 1\n got %v\nwant %v", t1, want1)
	}

	if t2["run_id"] != chat2 || t2["kind"] != "chat" || t2["prompt"] != "second question" {
		t.Fatalf("turn 2 %v", t2)
	}
	if want := map[string]any{"client": "web", "lang": "en"}; !reflect.DeepEqual(t2["prompt_metadata"], want) {
		t.Fatalf("prompt_metadata %v", t2["prompt_metadata"])
	}
	if want := []any{map[string]any{"$artifact": "a1", "filename": "f.txt"}}; !reflect.DeepEqual(t2["attachments"], want) {
		t.Fatalf("attachments %v", t2["attachments"])
	}
	if t2["answer"] != "final answer" || !reflect.DeepEqual(t2["answer_meta"], map[string]any{"model": "m"}) {
		t.Fatalf("answer %q meta %v", t2["answer"], t2["answer_meta"])
	}
	// The helper subworkflow's LLM call counts with the turn's own.
	stats := obj(t, t2["stats"], "stats")
	span := spanMS(t, st, chat2, helper[0])
	if num(t, stats["llm_calls"], "llm_calls") != 2 || num(t, stats["tool_calls"], "tool_calls") != 2 ||
		num(t, stats["duration_ms"], "duration_ms") != span || span <= 0 {
		t.Fatalf("stats %v (span %d)", stats, span)
	}
	if want := map[string]any{"input_tokens": json.Number("20"), "output_tokens": json.Number("10"),
		"total_tokens": json.Number("30")}; !reflect.DeepEqual(stats["usage"], want) {
		t.Fatalf("usage %v", stats["usage"])
	}
	tokS, err := stats["tok_s"].(json.Number).Float64()
	if err != nil || tokS != 30/(float64(span)/1000) {
		t.Fatalf("tok_s %v, want %v", stats["tok_s"], 30/(float64(span)/1000))
	}
	turnArts := list(t, t2["artifacts"], "artifacts")
	if len(turnArts) != 1 || obj(t, turnArts[0], "artifact")["artifact_id"] != "helper_art" {
		t.Fatalf("turn artifacts %v", turnArts)
	}
}

// Without chat turns every non-internal root run is a turn, classified,
// oldest first, limited to the newest SessionTurnLimit.
func TestExportSessionTurnKinds(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	startTick(t, rt, runtime.StartParams{WorkflowID: "__internal__", SessionID: "s3"})
	jobA := startTick(t, rt, runtime.StartParams{WorkflowID: "job", SessionID: "s3", Vars: map[string]any{"task": "first"}})
	daily := startTick(t, rt, runtime.StartParams{WorkflowID: "scheduled:daily", SessionID: "s3",
		Vars: map[string]any{"context": map[string]any{"task": "daily report"}}})
	metaSched := startTick(t, rt, runtime.StartParams{WorkflowID: "job", SessionID: "s3",
		Vars: map[string]any{"_meta": map[string]any{"schedule": map[string]any{"cron": "0 * * * *"}},
			"input_data": map[string]any{"message": "from the envelope"}}})
	jobB := startTick(t, rt, runtime.StartParams{WorkflowID: "job", SessionID: "s3",
		Vars: map[string]any{"prompt": "<runtime_metadata>not json</runtime_metadata> go"}})
	src := history.Source{Runs: st, Ledger: st}

	b, err := history.Export(ctx, src, jobB, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	type turn struct{ id, kind, prompt, answer any }
	var got []turn
	for _, tr := range list(t, obj(t, b["session"], "session")["turns"], "turns") {
		m := obj(t, tr, "turn")
		got = append(got, turn{m["run_id"], m["kind"], m["prompt"], m["answer"]})
	}
	want := []turn{
		{jobA, "run", "first", "done."},
		{daily, "scheduled", "daily report", "report"},
		{metaSched, "scheduled", "from the envelope", "done."},
		{jobB, "run", "go", "done."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns\n got %v\nwant %v", got, want)
	}

	b, err = history.Export(ctx, src, jobB, history.Options{IncludeSession: true, SessionTurnLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 2 || obj(t, turns[0], "t0")["run_id"] != metaSched || obj(t, turns[1], "t1")["run_id"] != jobB {
		t.Fatalf("limited turns %v", turns)
	}

	// Exporting an earlier run lists the turns up to it only.
	b, err = history.Export(ctx, src, daily, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns = list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 2 || obj(t, turns[0], "t0")["run_id"] != jobA || obj(t, turns[1], "t1")["run_id"] != daily {
		t.Fatalf("turns up to the daily run %v", turns)
	}

	// A run without a session has no session section.
	lone := startTick(t, rt, runtime.StartParams{WorkflowID: "job"})
	b, err = history.Export(ctx, src, lone, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if b["session"] != nil {
		t.Fatalf("session of a run without one: %v", b["session"])
	}
}

// Python _best_effort_session_turns: `answer, answer_meta =
// _extract_answer_from_run_output(r)`, and only `if not answer` AND the
// ledger is non-empty (`if ledger:`) are both replaced by the ledger's.
// A run whose output carries meta but no answer text, and whose ledger is
// empty (never ticked, or pruned by retention), keeps the output's meta.
// Our answer() replaced the meta with the ledger's nil whatever the
// ledger held.
func TestAnswerMetaKeptWhenLedgerEmpty(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	at := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	putRunAsIs(t, st, &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s",
		CreatedAt: at, UpdatedAt: at, Output: map[string]any{"meta": map[string]any{"model": "m"}}})
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "r1", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	turn := obj(t, turns[0], "turn")
	if turn["answer"] != nil {
		t.Fatalf("answer %v, want null", turn["answer"])
	}
	if got, ok := turn["answer_meta"].(map[string]any); !ok || got["model"] != "m" {
		t.Fatalf("answer_meta %v, want the output's meta {model: m} (Python keeps it when the ledger is empty)", turn["answer_meta"])
	}
}

// A session turn's created_at/updated_at are the run's texts as stored.
// Python (abstractruntime/history_bundle.py, _best_effort_session_turns)
// writes `str(r.created_at or "").strip() or None`, so a run read with a
// created_at that is text but no ISO time (which our stores keep as read,
// docs/compatibility.md, and which the bundle's "run" section shows) has
// that text in its turn. Writing the parsed times instead gave the turn
// created_at: null while the "run" section of the same run showed the text.
func TestSessionTurnKeepsCreatedAtTextAsStored(t *testing.T) {
	ctx := context.Background()
	const text, text2 = "yesterday at noon", "today"
	run, err := durable.UnmarshalRunString(`{"run_id": "r1", "workflow_id": "w", "status": "completed",
		"current_node": "n", "vars": {"prompt": "hi"}, "waiting": null, "output": {"answer": "yo"},
		"error": null, "created_at": "` + text + `", "updated_at": "` + text2 + `",
		"actor_id": null, "session_id": "s1", "parent_run_id": null}`)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	putRunAsIs(t, st, run)
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "r1", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj(t, b["run"], "run")["created_at"]; got != text {
		t.Fatalf("run.created_at = %v, want %q", got, text)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns = %v, want the run", turns)
	}
	if got := obj(t, turns[0], "turn")["created_at"]; got != text {
		t.Errorf("turn created_at = %#v, want %q (Python: str(r.created_at).strip() or None)", got, text)
	}
	if got := obj(t, turns[0], "turn")["updated_at"]; got != text2 {
		t.Errorf("turn updated_at = %#v, want %q (Python: str(r.updated_at).strip() or None)", got, text2)
	}
}
