package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// outputReact is a ReAct stand-in that completes with output and, when
// seen is not nil, records the vars it was started with.
func outputReact(id string, output map[string]any, seen *map[string]any) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "done", Nodes: map[string]runtime.NodeFunc{
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if seen != nil {
				*seen = pyjson.CloneObject(run.Vars)
			}
			return runtime.Complete(pyjson.CloneObject(output)), nil
		},
	}}
}

// pinnedAgentFlow is start -> agent -> end, the end node reading the
// agent's response (as r) and success (as ok) through data edges.
func pinnedAgentFlow(agentData map[string]any, agentIn []string) map[string]any {
	return rsFlow("vfe_agent", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", append([]string{"exec-in:exec"}, agentIn...),
			[]string{"exec-out:exec", "response:string", "success:boolean", "meta:object"}, agentData),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string", "ok:boolean"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.response>end.r", "ag.success>end.ok")
}

// runAgentFlow compiles flow, registers react and the effect handlers,
// starts with vars and ticks to completion.
func runAgentFlow(t *testing.T, flow map[string]any, react *runtime.Workflow, handlers map[durable.EffectType]runtime.Handler, vars map[string]any) *durable.RunState {
	t.Helper()
	st := tickAgentFlow(t, flow, react, handlers, vars)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	return st
}

// tickAgentFlow is runAgentFlow up to the end of the first tick, whatever
// the run's status then.
func tickAgentFlow(t *testing.T, flow map[string]any, react *runtime.Workflow, handlers map[durable.EffectType]runtime.Handler, vars map[string]any) *durable.RunState {
	t.Helper()
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	rt := newTestRuntime(t, memory.New(), handlers, wf, react)
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: wf.ID, Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A failed ReAct child resumes the parent with output {success:false,
// error} (§5.5). The agent maps it like Python's phase "subworkflow":
// answer = str(output.answer or "") and success true (§5.6), and with
// include_context only a non-empty answer is appended to the parent
// context, so the child's error text never becomes an assistant turn that
// later llm_call/agent nodes would read as something the assistant said.
func TestAgentFailedChildKeepsReferenceOutputs(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it", "include_context": true},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-fail"},
	}, []string{"prompt:string", "include_context:boolean"})
	react := outputReact("react-fail", map[string]any{"success": false, "error": "boom"}, nil)
	st := runAgentFlow(t, flow, react, nil, map[string]any{"context": map[string]any{"messages": []any{}}})
	if st.Output["r"] != "" || st.Output["ok"] != true {
		t.Errorf("agent outputs after a failed ReAct child: response=%#v success=%#v; want \"\" and true (spec §5.6)",
			st.Output["r"], st.Output["ok"])
	}
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	for _, m := range msgs {
		if o, _ := m.(map[string]any); o["role"] == "assistant" {
			t.Errorf("a failed child's turn appended an assistant message to the parent context: %s", jsonText(t, msgs))
		}
	}
}

// Python rebuilds an agent's pins from its bucket at every later step
// (_sync_effect_results_to_node_outputs: response = answer.strip()), so
// nodes reading agent.response through a data edge see the answer
// stripped, e.g. without the trailing newline an LLM answer often has.
func TestAgentResponsePinIsStrippedAnswer(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-ws"},
	}, []string{"prompt:string"})
	react := outputReact("react-ws", map[string]any{"answer": "  forty-two\n", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	if st.Output["r"] != "forty-two" {
		t.Errorf("end.r (wired from agent.response) = %q, want %q", st.Output["r"], "forty-two")
	}
}

// With include_context the agent appends its task and answer to the
// parent's context.messages. Python (compiler.py, agent handler, phase
// "subworkflow", _append) gives each such message the metadata
// {kind:"agent_turn", node_id, message_id:"agent:<sub_run_id>:<node>:task|answer",
// sub_run_id}, which hosts sharing the context (gateway, AbstractCode) use
// to tell which node and which child run produced a turn.
func TestAgentContextTurnMetadata(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it", "include_context": true},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-meta"},
	}, []string{"prompt:string", "include_context:boolean"})
	react := outputReact("react-meta", map[string]any{"answer": "done", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, nil, map[string]any{"context": map[string]any{"messages": []any{}}})
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("parent context messages = %s, want the task and the answer", jsonText(t, msgs))
	}
	for i, suffix := range []string{"task", "answer"} {
		o, _ := msgs[i].(map[string]any)
		md, _ := o["metadata"].(map[string]any)
		sub, _ := md["sub_run_id"].(string)
		if md["kind"] != "agent_turn" || md["node_id"] != "ag" || sub == "" || md["message_id"] != "agent:"+sub+":ag:"+suffix {
			t.Errorf("%s message metadata = %s; want kind agent_turn, node_id \"ag\", sub_run_id and message_id agent:<sub_run_id>:ag:%s",
				suffix, jsonText(t, md), suffix)
		}
	}
}

// The missing provider/model outcome's scratchpad pin has the reference's
// minimal transcript (its _sync_effect_results_to_node_outputs fills
// scratchpad.messages when the scratchpad has none, from the bucket's
// messages, else raw.context.messages, else [{user, raw.task stripped},
// {assistant, response}]), so a downstream reader of
// agent.scratchpad.messages sees the task and the error.
func TestAgentConfigErrorScratchpadHasTranscript(t *testing.T) {
	cfg := map[string]any{"_react_workflow_id": "react-cfg"}
	flow := rsFlow("vfe_agent_cfg", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"},
			[]string{"exec-out:exec", "response:string", "scratchpad:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "  do it "}, "agentConfig": cfg}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "sp:object"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.scratchpad>end.sp")
	react := outputReact("react-cfg", map[string]any{"answer": "A"}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	sp, _ := st.Output["sp"].(map[string]any)
	want := []any{map[string]any{"role": "user", "content": "do it"},
		map[string]any{"role": "assistant", "content": "Agent configuration error: missing provider/model"}}
	if got := jsonText(t, sp["messages"]); got != jsonText(t, want) {
		t.Errorf("agent.scratchpad.messages = %s\nwant %s (reference _minimal_transcript for the configuration-error outcome)",
			got, jsonText(t, want))
	}
}

// When the node already has a trace (a loop's earlier pass), the
// configuration error's scratchpad pin is that trace (the reference's
// get_node_trace fallback for a bucket without a scratchpad), with the
// tool activity and minimal transcript added.
func TestAgentConfigErrorScratchpadIsNodeTrace(t *testing.T) {
	cfg := map[string]any{"_react_workflow_id": "react-cfg"}
	flow := rsFlow("vfe_agent_trace", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"},
			[]string{"exec-out:exec", "scratchpad:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "sp:object"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.scratchpad>end.sp")
	step := map[string]any{"ts": "2024-01-01T00:00:00Z", "status": "completed",
		"effect": map[string]any{"type": "start_subworkflow", "payload": map[string]any{}}}
	vars := map[string]any{"_runtime": map[string]any{"node_traces": map[string]any{
		"ag": map[string]any{"node_id": "ag", "steps": []any{step}, "updated_at": "2024-01-01T00:00:00Z"}}}}
	react := outputReact("react-cfg", map[string]any{"answer": "A"}, nil)
	st := runAgentFlow(t, flow, react, nil, vars)
	sp, _ := st.Output["sp"].(map[string]any)
	steps, _ := sp["steps"].([]any)
	if len(steps) != 1 || sp["updated_at"] != "2024-01-01T00:00:00Z" {
		t.Errorf("agent.scratchpad = %s; want the node's trace (one step, its updated_at)", jsonText(t, sp))
	}
	if got := jsonText(t, sp["tool_calls"]); got != jsonText(t, []any{}) {
		t.Errorf("agent.scratchpad.tool_calls = %s, want []", got)
	}
	if msgs, _ := sp["messages"].([]any); len(msgs) != 2 {
		t.Errorf("agent.scratchpad.messages = %s, want the minimal transcript", jsonText(t, sp["messages"]))
	}
}
