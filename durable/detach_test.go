package durable

import (
	"testing"
	"unsafe"
)

// TestDecodedRunOwnsItsFields: a decoded run's own string fields do not
// share the document's memory (records and indexes copy them, and would
// keep the whole document alive), statuses and wait reasons are the
// package's constants, and the values are unchanged.
func TestDecodedRunOwnsItsFields(t *testing.T) {
	t.Parallel()
	doc := `{"run_id": "r-1", "workflow_id": "wf", "status": "waiting", "current_node": "ask",
		"vars": {"k": "v"}, "waiting": {"reason": "user", "wait_key": "user:r-1:ask", "until": null,
		"resume_to_node": "done", "result_key": "answer", "prompt": "Continue?", "choices": null,
		"allow_free_text": true, "details": null}, "output": null, "error": "e",
		"created_at": "2026-11-30T07:00:00.000000+00:00", "updated_at": "2026-11-30T07:00:00.000000+00:00",
		"actor_id": "a", "session_id": "s", "parent_run_id": "p"}`
	r, err := UnmarshalRunString(doc)
	if err != nil {
		t.Fatal(err)
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(doc)))
	inDoc := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return s != "" && p >= start && p < start+uintptr(len(doc))
	}
	w := r.Waiting
	fields := map[string]string{"run_id": r.RunID, "workflow_id": r.WorkflowID, "current_node": r.CurrentNode,
		"error": r.Error, "actor_id": r.ActorID, "session_id": r.SessionID, "parent_run_id": r.ParentRunID,
		"wait_key": w.WaitKey, "resume_to_node": w.ResumeToNode, "result_key": w.ResultKey, "prompt": w.Prompt,
		"status": string(r.Status), "reason": string(w.Reason)}
	want := map[string]string{"run_id": "r-1", "workflow_id": "wf", "current_node": "ask", "error": "e",
		"actor_id": "a", "session_id": "s", "parent_run_id": "p", "wait_key": "user:r-1:ask",
		"resume_to_node": "done", "result_key": "answer", "prompt": "Continue?", "status": "waiting", "reason": "user"}
	for name, v := range fields {
		if v != want[name] {
			t.Errorf("%s = %q, want %q", name, v, want[name])
		}
		if inDoc(v) {
			t.Errorf("%s shares the document's memory", name)
		}
	}
	if unsafe.StringData(string(r.Status)) != unsafe.StringData(string(RunWaiting)) {
		t.Errorf("status is not the RunWaiting constant")
	}
}
