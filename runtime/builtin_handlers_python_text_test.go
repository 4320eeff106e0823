package runtime

// The built-in handlers read payload text as the Python 0.4.28 kernel
// does (runtime.py, core/vars.py): Python's str.strip/lower for
// ANSWER_USER's level, str.isdigit/int() for VARS_QUERY path indices.
// Every expectation was checked by running the Python handler on the same
// payload.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// builtinRequest is an effect request of run r1 at node n1 (plan next
// node "next"), with result key "rk".
func builtinRequest(t *testing.T, typ durable.EffectType, payload, vars map[string]any) *EffectRequest {
	t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	run := &durable.RunState{RunID: "r1", WorkflowID: "wf", CurrentNode: "n1", SessionID: "s1", Vars: vars}
	return &EffectRequest{Run: run, Effect: &durable.Effect{Type: typ, Payload: payload, ResultKey: "rk"},
		NodeID: "n1", DefaultNext: "next", Runtime: errRuntime(t, memory.New(), Config{})}
}

// TestAnswerUserLevelUsesPythonStripLower: the level is
// str(level).strip().lower() (spec §3.2). Python's strip also removes
// U+001C..U+001F, and its lower maps 'İ' to "i̇" (two code points), so
// "warning\x1f" is a warning and "WARNİNG" is not (strings.TrimSpace and
// strings.ToLower answer the other way round).
func TestAnswerUserLevelUsesPythonStripLower(t *testing.T) {
	for _, c := range []struct{ level, want string }{
		{"warning\x1f", "warning"},
		{"\x1cerror", "error"},
		{"WARNİNG", "message"},
	} {
		req := builtinRequest(t, durable.EffectAnswerUser, map[string]any{"message": "m", "level": c.level}, nil)
		out, err := handleAnswerUser(context.Background(), req)
		if err != nil || out.Status != OutcomeCompleted {
			t.Fatalf("level %q: %+v %v", c.level, out, err)
		}
		if got := out.Result.(map[string]any)["level"]; got != c.want {
			t.Errorf("level %q: got %q, want %q", c.level, got, c.want)
		}
	}
}

// TestVarsQueryUnicodeDigitIndices: parse_vars_path takes a segment as an
// index when str.isdigit() holds (pointer and bare dot segments) or it
// matches \[(\d+)\], converted with int(). Both accept every Unicode
// decimal digit, so "١" (Arabic-Indic one) is index 1; "²" passes
// isdigit() but int() refuses it, and that ValueError, raised while
// parsing, is the tool error even before a missing key.
func TestVarsQueryUnicodeDigitIndices(t *testing.T) {
	for _, c := range []struct {
		path     string
		success  bool
		output   any
		errorMsg any
	}{
		{"/scratchpad/lst/١", true, "{\n  \"path\": \"/scratchpad/lst/١\",\n  \"type\": \"int\",\n  \"value\": 2\n}", nil},
		{"scratchpad.lst.١", true, "{\n  \"path\": \"scratchpad.lst.١\",\n  \"type\": \"int\",\n  \"value\": 2\n}", nil},
		{"scratchpad.lst[٣]", false, nil, "Index 3 out of range at scratchpad.lst (len=3)"},
		{"scratchpad.lst.²", false, nil, "invalid literal for int() with base 10: '²'"},
		{"missing.1²", false, nil, "invalid literal for int() with base 10: '1²'"},
		{"/scratchpad/lst/①", false, nil, "invalid literal for int() with base 10: '①'"},
		// \d matches decimal digits only: "[²]" is a stray bracket around a key.
		{"scratchpad.lst[²]", false, nil, "Expected object at scratchpad.lst but found list"},
		{"scratchpad.lst.99999999999999999999999", false, nil,
			"Index 99999999999999999999999 out of range at scratchpad.lst (len=3)"},
	} {
		vars := map[string]any{"scratchpad": map[string]any{"lst": []any{int64(1), int64(2), int64(3)}}}
		req := builtinRequest(t, durable.EffectVarsQuery, map[string]any{"path": c.path}, vars)
		out, err := handleVarsQuery(context.Background(), req)
		if err != nil || out.Status != OutcomeCompleted {
			t.Fatalf("path %q: %+v %v", c.path, out, err)
		}
		res := out.Result.(map[string]any)["results"].([]any)[0].(map[string]any)
		if res["success"] != c.success || res["output"] != c.output || res["error"] != c.errorMsg {
			t.Errorf("path %q: got success=%v output=%v error=%v; Python gives success=%v output=%v error=%v",
				c.path, res["success"], res["output"], res["error"], c.success, c.output, c.errorMsg)
		}
	}
}
