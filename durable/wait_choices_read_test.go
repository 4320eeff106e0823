package durable_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Python's stores read waiting.choices as given
// (json_files.JsonFileRunStore.load / sqlite._runstate_from_dict:
// choices=raw_waiting.get("choices")) and asdict writes it back: a value
// that is not a list is kept for the wire (Choices stays nil), not
// dropped to null on the next save.
func TestWaitChoicesNotAListKeptOnRewrite(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "workflow_id": "w", "status": "waiting", "current_node": "n", "vars": {}, "waiting": {"reason": "user", "wait_key": "k", "until": null, "resume_to_node": null, "result_key": null, "prompt": "Pick", "choices": "yes/no", "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": null, "updated_at": null, "actor_id": null, "session_id": null, "parent_run_id": null}`
	for _, choices := range []string{`"yes/no"`, `{"a": 1}`, `7`} {
		line := strings.Replace(in, `"yes/no"`, choices, 1)
		r, err := durable.UnmarshalRun([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if r.Waiting.Choices != nil || r.Waiting.ChoiceValues() != nil {
			t.Errorf("%s: Choices = %q, want nil", choices, r.Waiting.Choices)
		}
		cp, err := r.StoredCopy()
		if err != nil {
			t.Fatal(err)
		}
		for name, run := range map[string]*durable.RunState{"read": r, "StoredCopy": cp, "Clone": r.Clone()} {
			out, err := durable.MarshalRun(run, pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != line {
				t.Errorf("%s %s: choices lost on rewrite:\n got %s\nwant %s", choices, name, out, line)
			}
			generic, err := pyjson.Marshal(run.JSONValue(), pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			if string(generic) != line {
				t.Errorf("%s %s: JSONValue:\n got %s\nwant %s", choices, name, generic, line)
			}
		}
		// Choices set replace the value read.
		r.Waiting.SetChoiceValues([]any{"a"})
		if out, _ := durable.MarshalRun(r, pyjson.Line); !strings.Contains(string(out), `"choices": ["a"]`) {
			t.Errorf("%s: choices set: %s", choices, out)
		}
	}
}

// A caller that assigns Choices after SetChoiceValues replaces the list
// (rawChoices): a longer list must not be written, nor listed by
// ChoiceValues, as the old non-string values.
func TestChoicesAssignedAfterSetChoiceValuesReplaceTheList(t *testing.T) {
	t.Parallel()
	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k"}
	w.SetChoiceValues([]any{json.Number("1"), "b"})
	if got := w.ChoiceValues(); len(got) != 2 || got[0] != json.Number("1") {
		t.Fatalf("ChoiceValues after SetChoiceValues = %#v", got)
	}
	w.Choices = append(w.Choices, "c")
	got := w.ChoiceValues()
	if len(got) != 3 || got[0] != "1" || got[1] != "b" || got[2] != "c" {
		t.Errorf("ChoiceValues after Choices grew = %#v; want [\"1\" \"b\" \"c\"]", got)
	}
	run := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunWaiting, Vars: map[string]any{}, Waiting: w}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRun(run, st)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"c"]`) {
			t.Errorf("style %+v: the assigned choices are not written: %s", st, b)
		}
	}
}

// A caller that assigns Choices directly (not through SetChoiceValues)
// over choices read as a non-list replaces them in every encoding: the
// generic JSONValue (other styles, Map) as well as the Line fast path.
// Would break: WaitState.JSONValue writing choicesOther whatever Choices
// holds (dropping its "Choices == nil" guard), so a sorted-key or indented
// write, or the wait stored in vars, kept "yes/no".
func TestWaitChoicesAssignedOverNonListReadReplaceItInEveryEncoding(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "workflow_id": "w", "status": "waiting", "current_node": "n", "vars": {}, "waiting": {"reason": "user", "wait_key": "k", "until": null, "resume_to_node": null, "result_key": null, "prompt": "Pick", "choices": "yes/no", "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": null, "updated_at": null, "actor_id": null, "session_id": null, "parent_run_id": null}`
	r, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	r.Waiting.Choices = []string{"a", "b"}
	want := `"choices": ["a", "b"]`
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		out, err := durable.MarshalRun(r, st)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(string(out), " ", ""); !strings.Contains(got, strings.ReplaceAll(want, " ", "")) {
			t.Errorf("style %+v: assigned choices not written: %s", st, out)
		}
	}
	if got := r.Waiting.Map()["choices"]; !reflect.DeepEqual(got, []any{"a", "b"}) {
		t.Errorf("Map choices = %#v, want [a b]", got)
	}
}
