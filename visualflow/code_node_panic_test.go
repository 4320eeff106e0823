package visualflow

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// codeNodeFlowOf is start → code(codeBody) → end(out = code.output).
func codeNodeFlowOf(body string) string {
	return `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "code", "type": "code", "data": {"codeBody": ` + strconv.Quote(body) + `,
	    "inputs": [{"id": "exec-in", "type": "execution"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "out", "type": "any"}]}}
	], "edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	  {"source": "code", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
	  {"source": "code", "sourceHandle": "output", "target": "end", "targetHandle": "out"}
	]}`
}

// A code node whose user code makes Starlark's library panic
// (list(range(1 << 62)): "makeslice: cap out of range") must fail like
// any other code error: the node's failure record {success: false, error,
// ...} and §4.2 error handling (here: the run completes with
// success:false, as it does for 1 // 0). code.Run does not recover, so the
// panic reaches the runtime's callNode: the run is marked failed with
// "panic: runtime error: ...", no failure record is written, and the
// sandbox's watchdog goroutine is leaked until its 5s timer.
func TestCodeNodePanicFailsLikeACodeError(t *testing.T) {
	ref := runFlowOnce(t, codeNodeFlowOf("return 1 // 0"), map[string]any{})
	st := runFlowOnce(t, codeNodeFlowOf("return len(list(range(1 << 62)))"), map[string]any{})
	if ref.Status != st.Status {
		t.Fatalf("status %s (error %q); an ordinary code error (1 // 0) gives %s with output %s",
			st.Status, st.Error, ref.Status, jsonText(t, ref.Output))
	}
	if strings.Contains(st.Error, "panic") {
		t.Fatalf("run error %q", st.Error)
	}
	rec, _ := st.Vars["_temp"].(map[string]any)["node_outputs"].(map[string]any)["code"].(map[string]any)
	if rec == nil || rec["success"] != false {
		t.Fatalf("code node output record = %v, want {success: false, error: ...}", rec)
	}
	_ = durable.RunCompleted
}
