package durable

import (
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// RunState.Clone and WaitState.Clone promise a deep copy, and
// TestCopiesOwnTheValuesKeptAsRead that "StoredCopy and Clone of a record
// or a run built from the caller's maps share nothing with them".
// RunFromJSON keeps a wait's choices that are not a list, and a
// resume_to_node that is not a string, as values that every copy of the
// wait shares (choicesOther, resumeToValue). Would break: keeping the
// caller's own value there, so that a change to the caller's map after
// Clone changed what the clone writes.
func TestRunCloneOwnsTheWaitValuesKeptAsRead(t *testing.T) {
	t.Parallel()
	for _, member := range []string{"choices", "resume_to_node"} {
		kept := map[string]any{"k": "v"}
		run, err := RunFromJSON(map[string]any{"run_id": "r", "status": "waiting",
			"waiting": map[string]any{"reason": "user", member: kept}})
		if err != nil {
			t.Fatal(err)
		}
		clone := run.Clone()
		want, err := MarshalRun(run, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		kept["k"] = "CALLER"
		if got, _ := MarshalRun(clone, pyjson.Line); string(got) != string(want) {
			t.Errorf("%s: Clone changed with the caller's map:\n got  %s\n want %s", member, got, want)
		}
	}
}
