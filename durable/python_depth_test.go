package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Vars nested deeper than Python's json module reads: CPython's
// json.loads raises RecursionError near 1000 levels, which its stores do
// not catch (JsonFileRunStore.load, JsonlLedgerStore.list), so a run file
// or ledger line nested that deep breaks a Python process sharing the
// data. The encoders refuse it, naming the path, as they refuse NaN.
func TestMarshalRefusesNestingPythonCannotRead(t *testing.T) {
	t.Parallel()
	deep := nestedOnce(1200)
	r := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a",
		Vars: map[string]any{"deep": deep}}
	if _, err := durable.MarshalRun(r, pyjson.Line); err == nil || !strings.Contains(err.Error(), "vars.deep") ||
		!strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("MarshalRun of vars nested 1200 levels = %.120v; want nesting too deep at vars.deep", err)
	}
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Result: deep}
	if _, err := durable.MarshalRecord(rec, pyjson.Line); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("MarshalRecord of a result nested 1200 levels = %.120v; want nesting too deep", err)
	}
	// At the limit it is written and read back.
	r.Vars["deep"] = nestedOnce(pyjson.MaxDepth - 2) // scalar at MaxDepth: run 0, vars 1, deep 2
	out, err := durable.MarshalRun(r, pyjson.Pretty)
	if err != nil {
		t.Fatalf("MarshalRun at the limit: %v", err)
	}
	if _, err := durable.UnmarshalRun(out); err != nil {
		t.Fatalf("UnmarshalRun at the limit: %v", err)
	}
}

// A document nested deeper than the encoders write (another writer's)
// still reads: the decoder's limit is higher.
func TestUnmarshalReadsNestingPastTheEncoderLimit(t *testing.T) {
	t.Parallel()
	n := pyjson.MaxDepth + 100
	in := `{"run_id": "r", "workflow_id": "w", "status": "running", "current_node": "a", "vars": {"deep": ` +
		strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + `}}`
	if _, err := durable.UnmarshalRun([]byte(in)); err != nil {
		t.Fatalf("UnmarshalRun of vars nested %d levels: %v", n, err)
	}
}
