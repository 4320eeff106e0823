package durable_test

import (
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
