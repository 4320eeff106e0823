package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Python's loader (visual/models.py load_visualflow_json) reads the flow
// id, node ids and edge endpoints as str(v or "").strip(): a hand-written
// flow whose ids are JSON numbers compiles with ids "1" and "2" and a flow
// id "42". Ours kept only string ids, dropped every node and edge, and
// failed with "Flow must have an entry node".
func TestNumericIDsAreReadAsText(t *testing.T) {
	flow := mustFlow(t, `{"id":42,"nodes":[
	 {"id":1,"type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":2,"type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}},
	 {"id":0,"type":"on_flow_end","data":{}}],
	 "edges":[{"source":1,"sourceHandle":"exec-out","target":2,"targetHandle":"exec-in"}]}`)
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v (the reference reads the ids as \"1\" and \"2\")", err)
	}
	if wf.ID != "42" || wf.Entry != "1" {
		t.Fatalf("workflow %q entry %q, want \"42\" and \"1\"", wf.ID, wf.Entry)
	}
	if _, ok := wf.Nodes["2"]; !ok {
		t.Fatalf("node \"2\" missing from the workflow")
	}
	if _, ok := wf.Nodes["0"]; ok {
		t.Fatalf("node id 0 is falsy in Python (`or \"\"`) and is skipped; it was kept")
	}
	for v, want := range map[any]string{int64(7): "7", 1.5: "1.5", true: "True", false: "", " x ": "x", nil: ""} {
		if got := bundle.IDText(v); got != want {
			t.Errorf("IDText(%#v) = %q, want %q", v, got, want)
		}
	}
}
