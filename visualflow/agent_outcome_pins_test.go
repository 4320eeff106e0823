package visualflow

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// While the ReAct child runs, the agent's node output is the running
// record of §5.6 ({status:"running", task, context, response:"",
// success:null, meta:null, scratchpad:null}); a host showing the node
// reads response as text, so it must be "" rather than null.
func TestAgentRunningOutputWhileChildWaits(t *testing.T) {
	asking := &runtime.Workflow{ID: "react-wait", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "which?"}}, "ask"), nil
		},
	}}
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-wait"},
	}, []string{"prompt:string"})
	st := tickAgentFlow(t, flow, asking, nil, nil)
	if st.Status != durable.RunWaiting {
		t.Fatalf("status = %s (%s), want waiting on the child", st.Status, st.Error)
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	want := map[string]any{"status": "running", "task": "do it", "context": map[string]any{}, "response": "",
		"success": nil, "meta": nil, "scratchpad": nil}
	if got, w := jsonText(t, outs["ag"]), jsonText(t, want); got != w {
		t.Errorf("agent output while the child runs = %s\nwant %s", got, w)
	}
}

// The answer is Python's str(output.answer or ""): a falsy non-string
// answer (false, 0) gives the response "", not "False" or "0".
func TestAgentFalsyNonStringAnswerIsEmptyResponse(t *testing.T) {
	for _, answer := range []any{false, int64(0)} {
		flow := pinnedAgentFlow(map[string]any{
			"pinDefaults": map[string]any{"prompt": "do it"},
			"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-fa"},
		}, []string{"prompt:string"})
		react := outputReact("react-fa", map[string]any{"answer": answer, "iterations": int64(1), "messages": []any{}}, nil)
		st := runAgentFlow(t, flow, react, nil, nil)
		if st.Output["r"] != "" {
			t.Errorf("answer %#v: response = %#v, want \"\"", answer, st.Output["r"])
		}
		if b := agentBucketOf(st, "ag"); b["answer"] != "" {
			t.Errorf("answer %#v: bucket answer = %#v, want \"\"", answer, b["answer"])
		}
	}
}

// The bucket's success is what the success pin is rebuilt from after a
// restart (§5.6): true once the child answered, false for the
// configuration error. A bucket without it, or with the wrong value,
// gives a Python runtime continuing the run a different pin.
func TestAgentBucketSuccessRecordsOutcome(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		want bool
	}{
		{"child answered", map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-bs"}, true},
		{"configuration error", map[string]any{"_react_workflow_id": "react-bs"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": c.cfg},
				[]string{"prompt:string"})
			react := outputReact("react-bs", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
			st := runAgentFlow(t, flow, react, nil, nil)
			b := agentBucketOf(st, "ag")
			if got, ok := b["success"]; !ok || got != c.want {
				t.Errorf("bucket success = %#v (present %v), want %v", got, ok, c.want)
			}
			if st.Output["ok"] != c.want {
				t.Errorf("success pin = %#v, want %v", st.Output["ok"], c.want)
			}
		})
	}
}

// Python sorts the steps by str(ts or ""): a step whose ts is falsy but
// not null (false) sorts first, before any timestamp; reading it as
// "False" would sort it after the dated steps.
func TestAgentStepWithFalsyTsSortsFirst(t *testing.T) {
	traces := map[string]any{"reason": map[string]any{"steps": []any{
		map[string]any{"step_id": "dated", "ts": "2026-01-01T00:00:00Z"},
		map[string]any{"step_id": "falsy", "ts": false},
	}}}
	if got := strings.Join(agentScratchpadStepIDs(t, traces), ","); got != "falsy,dated" {
		t.Errorf("scratchpad.steps = %s, want falsy,dated (str(False or \"\") is \"\")", got)
	}
}
