package visualflow

import "testing"

// A scheduler with several unsupported exec outputs is refused; the
// error must name the same handle on every compile (it named whichever
// handle Go's map iteration produced first).
func TestReviewSchedulerUnsupportedOutputsErrorIsDeterministic(t *testing.T) {
	flow := rsFlow("sched_err", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		// No pin metadata: the edges below pass the endpoint check.
		{"id": "L", "type": "loop", "data": map[string]any{}},
		rsNode("a", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
		rsNode("b", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
		rsNode("c", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
		rsNode("d", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>L.exec-in", "L.x1>a.exec-in", "L.x2>b.exec-in", "L.x3>c.exec-in", "L.x4>d.exec-in")
	seen := map[string]bool{}
	for range 50 {
		_, err := Compile(mustFlow(t, jsonText(t, flow)), CompileOptions{})
		if err == nil {
			t.Fatal("compiled a loop with unsupported exec outputs")
		}
		seen[err.Error()] = true
	}
	if len(seen) != 1 {
		t.Fatalf("compile error differs between compiles of the same document: %v", seen)
	}
}
