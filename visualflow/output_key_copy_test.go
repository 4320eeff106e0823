package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// A function node's result is written at outputKey as a copy: a later
// dotted set_var writes into that variable in place, which must not
// rewrite the node's recorded output (a restart reads the record as it
// was written, so a shared object would make a straight run and a
// resumed one disagree).
func TestOutputKeyWriteDoesNotShareTheRecord(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "code", "type": "code", "data": {"codeBody": "return {'a': {'x': 1}}", "outputKey": "st",
	      "inputs": [{"id": "exec-in", "type": "execution"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	    {"id": "sv", "type": "set_var", "data": {"pinDefaults": {"name": "st.a.x", "value": 2},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "got", "type": "any"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	    {"source": "code", "sourceHandle": "exec-out", "target": "sv", "targetHandle": "exec-in"},
	    {"source": "sv", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
	    {"source": "code", "sourceHandle": "output", "target": "end", "targetHandle": "got"}
	  ]}`, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := normJSON(t, st.Vars["st"]); got != `{"a":{"x":2}}` {
		t.Fatalf("vars.st = %s, want the set_var applied", got)
	}
	if got := normJSON(t, st.Output["got"]); got != `{"a":{"x":1}}` {
		t.Fatalf("code.output after a dotted set_var into its outputKey = %s, want {\"a\":{\"x\":1}}", got)
	}
}
