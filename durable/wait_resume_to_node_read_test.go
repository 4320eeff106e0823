package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// resumeToNodeRun is run_<id>.json as Python's JsonFileRunStore writes it
// (json.dump(asdict(run), indent=2)) for a run waiting on an effect whose
// payload carried "resume_to_node": RESUME.
const resumeToNodeRun = `{
  "run_id": "3f0c2c1e-8d0e-4a55-9d0b-5f1d8d9c0a11",
  "workflow_id": "wf",
  "status": "waiting",
  "current_node": "wait",
  "vars": {},
  "waiting": {
    "reason": "REASON",
    "wait_key": "WAITKEY",
    "until": null,
    "resume_to_node": RESUME,
    "result_key": "evt",
    "prompt": null,
    "choices": null,
    "allow_free_text": true,
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-12-01T06:00:10.515822+00:00",
  "updated_at": "2026-12-01T06:00:10.517753+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`

// Python's wait handlers (_handle_wait_event, _handle_wait_until,
// _handle_ask_user, the TOOL_CALLS passthrough) store
// payload.get("resume_to_node") or default_next_node without str(), and
// its stores read the member back unchecked. A run holding a non-string
// resume target must still decode (else the JSON store skips its file and
// the run can be neither listed nor cancelled): ResumeToNode is "" for Go
// callers, and both encodings write the value back as read.
func TestWaitNonStringResumeToNodeKeptAsRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ reason, waitKey, resume string }{
		{"event", "evt:session:s1:go", "7"},
		{"user", "user:r:wait", "true"},
		{"event", "tool_calls:r:wait", "3.5"},
		{"until", "", "-1e3"},
	} {
		text := strings.NewReplacer("REASON", c.reason, `"WAITKEY"`, waitKeyJSON(c.waitKey), "RESUME", c.resume).Replace(resumeToNodeRun)
		r, err := durable.UnmarshalRun([]byte(text))
		if err != nil {
			t.Errorf("resume_to_node %s: UnmarshalRun: %v", c.resume, err)
			continue
		}
		if r.Waiting.ResumeToNode != "" {
			t.Errorf("resume_to_node %s: ResumeToNode = %q, want \"\"", c.resume, r.Waiting.ResumeToNode)
		}
		out, err := durable.MarshalRun(r, pyjson.Pretty)
		if err != nil || string(out) != text {
			t.Errorf("resume_to_node %s: pretty re-encoding is not Python's text (%v):\n%s", c.resume, err, out)
		}
		line, err := durable.MarshalRun(r.Clone(), pyjson.Line)
		if want := `"resume_to_node": ` + c.resume + `, `; err != nil || !strings.Contains(string(line), want) {
			t.Errorf("resume_to_node %s: line encoding lost it (%v):\n%s", c.resume, err, line)
		}
		// A node set since replaces the value read.
		r.Waiting.ResumeToNode = "next"
		if line, _ := durable.MarshalRun(r, pyjson.Line); !strings.Contains(string(line), `"resume_to_node": "next", `) {
			t.Errorf("resume_to_node %s then set to next: %s", c.resume, line)
		}
		// And in the generic encoding (other styles, Map): ResumeToNodeValue
		// writing the value read whatever ResumeToNode holds would keep it.
		if got := r.Waiting.ResumeToNodeValue(); got != "next" {
			t.Errorf("resume_to_node %s then set to next: ResumeToNodeValue = %#v", c.resume, got)
		}
		if pretty, _ := durable.MarshalRun(r, pyjson.Pretty); !strings.Contains(string(pretty), `"resume_to_node": "next"`) {
			t.Errorf("resume_to_node %s then set to next, pretty: %s", c.resume, pretty)
		}
	}
}

// waitKeyJSON is the JSON of a wait key, "" being null.
func waitKeyJSON(s string) string {
	if s == "" {
		return "null"
	}
	return `"` + s + `"`
}

// SetResumeToValue is how a wait handler stores payload.resume_to_node as
// given: a string names the node; any other value is kept for both
// encodings, as one read from a store is, with ResumeToNode "", and is
// copied (the payload may change after). nil clears the target.
func TestWaitSetResumeToValue(t *testing.T) {
	t.Parallel()
	var w durable.WaitState
	w.Reason = durable.WaitUser
	w.SetResumeToValue("n2")
	if w.ResumeToNode != "n2" || w.ResumeToNodeValue() != "n2" {
		t.Fatalf("string target: %q %v", w.ResumeToNode, w.ResumeToNodeValue())
	}
	given := []any{"x", int64(7)}
	w.SetResumeToValue(given)
	given[0] = "changed"
	if w.ResumeToNode != "" {
		t.Fatalf("non-string target: ResumeToNode = %q, want \"\"", w.ResumeToNode)
	}
	r := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n1",
		Vars: map[string]any{}, Waiting: &w}
	line, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil || !strings.Contains(string(line), `"resume_to_node": ["x", 7], `) {
		t.Fatalf("line encoding (%v): %s", err, line)
	}
	back, err := durable.UnmarshalRun(line)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := pyjson.Marshal(back.Waiting.ResumeToNodeValue(), pyjson.Line); string(text) != `["x", 7]` {
		t.Fatalf("read back: %s", text)
	}
	w.SetResumeToValue(nil)
	if w.ResumeToNode != "" || w.ResumeToNodeValue() != nil {
		t.Fatalf("nil target: %q %v", w.ResumeToNode, w.ResumeToNodeValue())
	}
}
