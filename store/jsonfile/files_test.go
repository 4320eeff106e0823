package jsonfile_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		// The store's lock files, see TestStore_OneStorePerDir and
		// TestPythonRunnerRefusedWhileStoreOpen.
		if e.Name() != ".abstractgateway-store.lock" && e.Name() != "gateway_runner.lock" {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestStore_OneStorePerDir: a second store on a directory another open
// store holds fails to open, with ErrDirInUse, and writes nothing; once
// the first is closed it opens.
func TestStore_OneStorePerDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning}
	if err := first.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir)
	if second, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true}); !errors.Is(err, jsonfile.ErrDirInUse) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("second open = %v, want ErrDirInUse", err)
	}
	if after := listDir(t, dir); !slices.Equal(before, after) {
		t.Fatalf("the refused open changed the directory: %v → %v", before, after)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatalf("open after the first store closed: %v", err)
	}
	defer again.Close()
	if _, err := again.RunGet(t.Context(), "r1"); err != nil {
		t.Fatal(err)
	}
}

// closeStore closes s, so that another store may open its directory.
func closeStore(t *testing.T, s *jsonfile.Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustTime(t *testing.T, s string) durable.Time {
	t.Helper()
	tm, err := durable.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestStore_FileBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, false)
	r := &durable.RunState{
		RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "ask",
		Vars: map[string]any{
			"context": map[string]any{"task": "café ☕"},
			"n":       json.Number("1.0"),
			"empty":   map[string]any{},
			"list":    []any{json.Number("1"), nil, "ü"},
		},
		Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:r1:ask", ResumeToNode: "done",
			Prompt: "Continue?", Choices: []string{"yes", "no"}, AllowFreeText: true},
		CreatedAt: mustTime(t, "2026-11-29T22:46:49.388378+00:00"),
		UpdatedAt: mustTime(t, "2026-11-29T22:46:50+00:00"),
		SessionID: "sess_1",
	}
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "ask", Status: durable.StepStarted,
		Effect:    &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "Continue? ✓"}, ResultKey: "answer"},
		StartedAt: mustTime(t, "2026-11-29T22:46:49.645966+00:00"), Attempt: 1}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	if got, want := listDir(t, dir), []string{"ledger_r1.jsonl", "run_r1.json"}; !slices.Equal(got, want) {
		t.Fatalf("dir = %v, want %v", got, want)
	}
	wantRun := `{
  "run_id": "r1",
  "workflow_id": "wf",
  "status": "waiting",
  "current_node": "ask",
  "vars": {
    "context": {
      "task": "café ☕"
    },
    "empty": {},
    "list": [
      1,
      null,
      "ü"
    ],
    "n": 1.0
  },
  "waiting": {
    "reason": "user",
    "wait_key": "user:r1:ask",
    "until": null,
    "resume_to_node": "done",
    "result_key": null,
    "prompt": "Continue?",
    "choices": [
      "yes",
      "no"
    ],
    "allow_free_text": true,
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-11-29T22:46:49.388378+00:00",
  "updated_at": "2026-11-29T22:46:50+00:00",
  "actor_id": null,
  "session_id": "sess_1",
  "parent_run_id": null
}`
	if got := readFile(t, filepath.Join(dir, "run_r1.json")); got != wantRun {
		t.Errorf("run file:\n%s\nwant:\n%s", got, wantRun)
	}
	wantLedger := `{"run_id": "r1", "step_id": "s1", "node_id": "ask", "status": "started", ` +
		`"effect": {"type": "ask_user", "payload": {"prompt": "Continue? ✓"}, "result_key": "answer"}, ` +
		`"result": null, "error": null, "started_at": "2026-11-29T22:46:49.645966+00:00", "ended_at": null, ` +
		`"actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, ` +
		`"record_hash": null, "signature": null}` + "\n"
	if got := readFile(t, filepath.Join(dir, "ledger_r1.jsonl")); got != wantLedger {
		t.Errorf("ledger file:\n%s\nwant:\n%s", got, wantLedger)
	}

	// Commands and cursors.
	cmd := &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause", Payload: map[string]any{"reason": "é"},
		TS: mustTime(t, "2026-11-29T22:47:00.000001+00:00")}
	if _, err := s.CommandAppend(t.Context(), cmd); err != nil {
		t.Fatal(err)
	}
	wantCmd := `{"command_id": "c1", "run_id": "r1", "type": "pause", "payload": {"reason": "é"}, ` +
		`"ts": "2026-11-29T22:47:00.000001+00:00", "client_id": null, "seq": 1}` + "\n"
	if got := readFile(t, filepath.Join(dir, "commands.jsonl")); got != wantCmd {
		t.Errorf("commands file:\n%s\nwant:\n%s", got, wantCmd)
	}
	if err := s.CursorSave(t.Context(), store.DefaultConsumer, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(t.Context(), "worker-2", 7); err != nil {
		t.Fatal(err)
	}
	cursorRE := regexp.MustCompile(`^\{\n  "cursor": 1,\n  "updated_at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00"\n\}$`)
	if got := readFile(t, filepath.Join(dir, "commands_cursor.json")); !cursorRE.MatchString(got) {
		t.Errorf("cursor file = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "commands_cursor_worker-2.json")); !strings.Contains(got, `"cursor": 7,`) {
		t.Errorf("worker-2 cursor file = %q", got)
	}
	if got, want := listDir(t, dir), []string{"commands.jsonl", "commands_cursor.json", "commands_cursor_worker-2.json",
		"ledger_r1.jsonl", "run_r1.json"}; !slices.Equal(got, want) {
		t.Errorf("dir = %v, want %v (no temp files)", got, want)
	}
}

// pythonRun is a run file as the Python JsonFileRunStore writes it (spec
// §1.5, abridged), with allow_free_text missing from the wait.
const pythonRun = `{
  "run_id": "d94e9e30-3689-4349-943c-8d437f62dcce",
  "workflow_id": "demo_wf",
  "status": "waiting",
  "current_node": "ask",
  "vars": {
    "context": {"task": "demo — ünïcode"},
    "_limits": {
      "max_iterations": 50, "current_iteration": 0, "max_tokens": 32768,
      "max_output_tokens": null, "max_input_tokens": null, "estimated_tokens_used": 12,
      "max_history_messages": -1, "warn_iterations_pct": 80, "warn_tokens_pct": 80
    },
    "_runtime": {"provider": "ollama", "model": "qwen3:4b", "node_traces": {"ask": {"node_id": "ask", "steps": [
      {"ts": "2026-11-29T22:46:49.646662+00:00", "node_id": "ask", "status": "waiting", "duration_ms": 0.7429799999840725}],
      "updated_at": "2026-11-29T22:46:49.646681+00:00"}}},
    "_temp": {"prev_node_id": "ask", "prev_next_node": "done"}
  },
  "waiting": {
    "reason": "user",
    "wait_key": "user:d94e9e30-3689-4349-943c-8d437f62dcce:ask",
    "until": null,
    "resume_to_node": "done",
    "result_key": "answer",
    "prompt": "Continue?",
    "choices": ["yes", "no"],
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-11-29T22:46:49.388378+00:00",
  "updated_at": "2026-11-29T22:46:49.646746+00:00",
  "actor_id": "actor_1",
  "session_id": "sess_1",
  "parent_run_id": null
}
`

// pythonLedger is a JSONL ledger as the Python JsonlLedgerStore writes it
// (spec §1.7), with a field from a newer writer on the second line.
const pythonLedger = `{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "step_id": "651bb22b-ecea-44ee-944f-ee376934c141", "node_id": "ask", "status": "started", "effect": {"type": "ask_user", "payload": {"prompt": "Continue?", "choices": ["yes", "no"]}, "result_key": "answer"}, "result": null, "error": null, "started_at": "2026-11-29T22:46:49.645966+00:00", "ended_at": null, "actor_id": "actor_1", "session_id": "sess_1", "attempt": 1, "idempotency_key": "7ede3e0158fce27f7a6a5e94b9512e38", "prev_hash": null, "record_hash": null, "signature": null}
{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "step_id": "651bb22b-ecea-44ee-944f-ee376934c141", "node_id": "ask", "status": "waiting", "effect": {"type": "ask_user", "payload": {"prompt": "Continue?", "choices": ["yes", "no"]}, "result_key": "answer"}, "result": {"wait": {"reason": "user", "wait_key": "user:d94e9e30-3689-4349-943c-8d437f62dcce:ask", "until": null, "resume_to_node": "done", "result_key": "answer", "prompt": "Continue?", "choices": ["yes", "no"], "allow_free_text": true, "details": null}}, "error": null, "started_at": "2026-11-29T22:46:49.645966+00:00", "ended_at": "2026-11-29T22:46:49.646420+00:00", "actor_id": "actor_1", "session_id": "sess_1", "attempt": 1, "idempotency_key": "7ede3e0158fce27f7a6a5e94b9512e38", "prev_hash": null, "record_hash": null, "signature": null, "cancelled_by": null}
`

func TestStore_PythonFiles(t *testing.T) {
	t.Parallel()
	const id = "d94e9e30-3689-4349-943c-8d437f62dcce"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "run_"+id+".json"), pythonRun)
	writeFile(t, filepath.Join(dir, "ledger_"+id+".jsonl"), pythonLedger)
	s := open(t, dir, true)
	ctx := t.Context()

	r, err := s.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 1 || r.Status != durable.RunWaiting || r.Waiting == nil || !r.Waiting.AllowFreeText ||
		r.Waiting.ResumeToNode != "done" || r.ActorID != "actor_1" || r.Vars["context"].(map[string]any)["task"] != "demo — ünïcode" {
		t.Fatalf("loaded run = %+v (waiting %+v)", r, r.Waiting)
	}
	if got := r.Vars["_limits"].(map[string]any)["max_history_messages"]; got != json.Number("-1") {
		t.Errorf("number literal = %#v", got)
	}
	list, err := s.RunList(ctx, &store.RunListParams{WaitKeys: []string{"user:" + id + ":ask"}})
	if err != nil || len(list) != 1 {
		t.Fatalf("RunList by wait key = %v, %v", list, err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil || len(recs) != 2 {
		t.Fatalf("LedgerList = %d records, %v", len(recs), err)
	}
	if recs[1].Seq != 2 || recs[1].Status != durable.StepWaiting || recs[1].Extra == nil {
		t.Errorf("second record = %+v", recs[1])
	}
	if _, ok := recs[1].Extra["cancelled_by"]; !ok {
		t.Errorf("unknown key not kept: %#v", recs[1].Extra)
	}

	// The run resumes: a resume record and the completed state.
	resume := &durable.StepRecord{RunID: id, StepID: "95f2acda-4293-463b-88d1-f7d55fb961e5", NodeID: "ask",
		Status: durable.StepCompleted, Result: map[string]any{"resumed": true}, Attempt: 1,
		Effect: &durable.Effect{Type: durable.EffectResume, Payload: map[string]any{"payload": map[string]any{"text": "yes"}}}}
	r.Vars["answer"] = map[string]any{"text": "yes"}
	r.Status, r.Waiting, r.CurrentNode = durable.RunCompleted, nil, "done"
	r.Output = map[string]any{"answer": map[string]any{"text": "yes"}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{resume}}); err != nil {
		t.Fatal(err)
	}
	if resume.Seq != 3 {
		t.Errorf("resume record Seq = %d, want 3", resume.Seq)
	}
	text := readFile(t, filepath.Join(dir, "run_"+id+".json"))
	for _, want := range []string{`"status": "completed"`, `"waiting": null`, `"current_node": "done"`, `"text": "yes"`, "demo — ünïcode"} {
		if !strings.Contains(text, want) {
			t.Errorf("saved run lacks %s:\n%s", want, text)
		}
	}
	led := readFile(t, filepath.Join(dir, "ledger_"+id+".jsonl"))
	if !strings.HasPrefix(led, pythonLedger) || strings.Count(led, "\n") != 3 {
		t.Errorf("ledger was not appended to:\n%s", led)
	}

	// A fresh store reads what it wrote.
	closeStore(t, s)
	s2 := open(t, dir, true)
	r2, err := s2.RunGet(ctx, id)
	if err != nil || r2.Status != durable.RunCompleted || r2.Output["answer"] == nil {
		t.Fatalf("reopened run = %+v, %v", r2, err)
	}
}

func TestStore_TornFinalLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, true)
	ctx := t.Context()
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{}}
	recs := []*durable.StepRecord{
		{RunID: "r1", StepID: "a", NodeID: "n", Status: durable.StepStarted},
		{RunID: "r1", StepID: "b", NodeID: "n", Status: durable.StepCompleted},
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: recs}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger_r1.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"run_id": "r1", "step_id": "torn", "node_i`); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	// A fresh store (no cached ledger state) reads around the torn line.
	closeStore(t, s)
	s2 := open(t, dir, true)
	got, err := s2.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil || len(got) != 2 || got[1].StepID != "b" {
		t.Fatalf("LedgerList with a torn final line = %v, %v", got, err)
	}
	if n, _ := s2.LedgerCount(ctx, "r1"); n != 2 {
		t.Errorf("LedgerCount = %d, want 2", n)
	}
	// The next append terminates the torn line instead of merging with it.
	next := &durable.StepRecord{RunID: "r1", StepID: "c", NodeID: "n", Status: durable.StepStarted}
	if err := s2.LedgerAppend(ctx, "r1", []*durable.StepRecord{next}); err != nil {
		t.Fatal(err)
	}
	if next.Seq != 3 {
		t.Errorf("Seq after a torn line = %d, want 3", next.Seq)
	}
	got, _ = s2.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if len(got) != 3 || got[2].StepID != "c" || got[2].Seq != 3 {
		t.Fatalf("ledger after append = %d records", len(got))
	}
	if text := readFile(t, path); !strings.Contains(text, `"node_i`+"\n"+`{"run_id": "r1", "step_id": "c"`) {
		t.Errorf("ledger file:\n%s", text)
	}
	closeStore(t, s2)
	s3 := open(t, dir, true)
	got, _ = s3.LedgerList(ctx, &store.LedgerListParams{RunID: "r1", After: 2})
	if len(got) != 1 || got[0].StepID != "c" || got[0].Seq != 3 {
		t.Errorf("reopened ledger after 2 = %v", got)
	}
}

func TestStore_ConcatenatedRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := func(step string) string {
		return `{"run_id": "r1", "step_id": "` + step + `", "node_id": "n", "status": "completed", "effect": null, ` +
			`"result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, ` +
			`"attempt": 1, "idempotency_key": "k-` + step + `", "prev_hash": null, "record_hash": null, "signature": null}`
	}
	writeFile(t, filepath.Join(dir, "ledger_r1.jsonl"),
		line("a")+"\n\n"+line("b")+line("c")+"\n"+"not json\n"+line("d")+" "+line("e")+"\n")
	s := open(t, dir, true)
	got, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for i, r := range got {
		steps = append(steps, r.StepID)
		if r.Seq != int64(i+1) {
			t.Errorf("record %s Seq = %d, want %d", r.StepID, r.Seq, i+1)
		}
	}
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(steps, want) {
		t.Errorf("records = %v, want %v", steps, want)
	}
	if r, err := s.LedgerFindCompleted(t.Context(), "r1", "k-c"); err != nil || r == nil || r.StepID != "c" || r.Seq != 3 {
		t.Errorf("LedgerFindCompleted(k-c) = %+v, %v", r, err)
	}
	page, _ := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "r1", After: 2, Limit: 2})
	if len(page) != 2 || page[0].StepID != "c" || page[1].StepID != "d" {
		t.Errorf("page after 2 = %v", page)
	}
}

func TestStore_CorruptRunFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run_bad.json")
	const corrupt = `{"run_id": "bad", "workflow_id": "wf", "sta`
	writeFile(t, path, corrupt)
	writeFile(t, filepath.Join(dir, "run_badstatus.json"), `{"run_id": "badstatus", "status": "exploded"}`)
	s := open(t, dir, true)
	ctx := t.Context()
	_, err := s.RunGet(ctx, "bad")
	if err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), path) {
		t.Errorf("RunGet(corrupt) err = %v, want an error naming %s", err, path)
	}
	list, err := s.RunList(ctx, &store.RunListParams{})
	if err != nil || len(list) != 0 {
		t.Errorf("RunList with corrupt files = %v, %v; want none", list, err)
	}
	rows, _ := s.RunIndex(ctx, &store.RunIndexParams{})
	if len(rows) != 0 {
		t.Errorf("RunIndex with corrupt files = %v", rows)
	}
	r := &durable.RunState{RunID: "bad", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{}}
	err = s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true})
	if !errors.Is(err, store.ErrAlreadyExists) || !strings.Contains(err.Error(), path) {
		t.Errorf("create over a corrupt file: err = %v", err)
	}
	rec := &durable.StepRecord{RunID: "bad", StepID: "s", NodeID: "n", Status: durable.StepCompleted}
	err = s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec}})
	if !errors.Is(err, store.ErrAlreadyExists) || !strings.Contains(err.Error(), path) {
		t.Errorf("create with records over a corrupt file: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ledger_bad.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused create appended its records: %v", err)
	}
	r.Version = 1
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("commit over a corrupt file: err = %v", err)
	}
	if got := readFile(t, path); got != corrupt {
		t.Errorf("corrupt file was overwritten: %q", got)
	}
}

func TestStore_TempFileRemovedOnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, true)
	// A directory in place of the cursor file makes the rename fail.
	if err := os.MkdirAll(filepath.Join(dir, "commands_cursor.json", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(t.Context(), store.DefaultConsumer, 3); err == nil {
		t.Fatal("CursorSave over a directory succeeded")
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"commands_cursor.json"}) {
		t.Errorf("dir after a failed write = %v (temp file left behind?)", got)
	}
	if n, err := s.CursorLoad(t.Context(), store.DefaultConsumer); err != nil || n != 0 {
		t.Errorf("CursorLoad of an unreadable cursor = %d, %v; want 0", n, err)
	}
}

func TestStore_Reopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()
	s := open(t, dir, true)
	until := durable.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	parent := &durable.RunState{RunID: "p", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{}}
	child := &durable.RunState{RunID: "c", WorkflowID: "wf", Status: durable.RunWaiting, ParentRunID: "p", Vars: map[string]any{},
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: until}}
	for _, r := range []*durable.RunState{parent, child} {
		rec := &durable.StepRecord{RunID: r.RunID, StepID: "s", NodeID: "n", Status: durable.StepStarted}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: parent}); err != nil { // version 2
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: id, RunID: "p", Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "d", RunID: "gone", Type: "cancel"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(ctx, store.DefaultConsumer, 4); err != nil {
		t.Fatal(err)
	}
	// Deleting the newest command: only the cursor remembers seq 4.
	if n, err := s.CommandDeleteByRun(ctx, "gone"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunGet(ctx, "p"); err == nil {
		t.Errorf("RunGet on a closed store succeeded")
	}

	s2 := open(t, dir, true)
	p2, err := s2.RunGet(ctx, "p")
	if err != nil || p2.Version != 1 {
		t.Fatalf("reopened run: version %v, %v; want 1", p2, err)
	}
	rec := &durable.StepRecord{RunID: "p", StepID: "s2", NodeID: "n", Status: durable.StepCompleted}
	if err := s2.RunCommit(ctx, &store.CommitParams{Run: p2, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	if rec.Seq != 2 || p2.Version != 2 {
		t.Errorf("after reopen: record Seq %d, version %d; want 2, 2", rec.Seq, p2.Version)
	}
	if kids, _ := s2.RunListChildren(ctx, "p", ""); len(kids) != 1 || kids[0].RunID != "c" {
		t.Errorf("children after reopen = %v", kids)
	}
	if due, _ := s2.RunListDue(ctx, &store.RunListDueParams{Now: until.Time}); len(due) != 1 || due[0].RunID != "c" {
		t.Errorf("due after reopen = %v", due)
	}
	if res, err := s2.CommandAppend(ctx, &durable.CommandRecord{CommandID: "b", RunID: "p", Type: "pause"}); err != nil || !res.Duplicate || res.Seq != 2 {
		t.Errorf("duplicate after reopen = %+v, %v; want duplicate of seq 2", res, err)
	}
	res, err := s2.CommandAppend(ctx, &durable.CommandRecord{CommandID: "e", RunID: "p", Type: "resume"})
	if err != nil || !res.Accepted || res.Seq != 5 {
		t.Errorf("append after reopen = %+v, %v; want seq 5 (above the saved cursor)", res, err)
	}
	if c, _ := s2.CursorLoad(ctx, store.DefaultConsumer); c != 4 {
		t.Errorf("cursor after reopen = %d, want 4", c)
	}
	cmds, next, err := s2.CommandListAfter(ctx, 1, 0)
	if err != nil || next != 5 || len(cmds) != 3 || cmds[0].Seq != 2 || cmds[2].Seq != 5 || cmds[0].TS.IsZero() {
		t.Errorf("CommandListAfter(1) after reopen = %v next %d, %v", cmds, next, err)
	}
	if last, _ := s2.CommandLastSeq(ctx); last != 5 {
		t.Errorf("CommandLastSeq = %d, want 5", last)
	}
}

func TestStore_InvalidIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, true)
	for _, id := range []string{"../escape", "a/b", `a\b`, ".."} {
		r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning}
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err == nil {
			t.Errorf("create of run %q succeeded", id)
		}
		if _, err := s.RunGet(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RunGet(%q) err = %v, want ErrNotFound", id, err)
		}
		if err := s.CursorSave(t.Context(), id, 1); err == nil {
			t.Errorf("CursorSave(%q) succeeded", id)
		}
	}
	if got := listDir(t, dir); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
}
