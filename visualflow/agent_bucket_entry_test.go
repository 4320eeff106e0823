package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Entering the agent afresh clears its memory-source bucket
// _temp.memory_sources.<N> (spec §5.6 "On entry": the bucket and its
// memory-source bucket are cleared), and only its own: another node's
// memory-source bucket stays. Without the clearing, a stale memory phase
// (e.g. from a run Python saved) would stay attached to the node.
func TestAgentEntryClearsItsMemorySourceBucket(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-ms"}},
		[]string{"prompt:string"})
	react := outputReact("react-ms", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	vars := map[string]any{"_temp": map[string]any{"memory_sources": map[string]any{
		"ag": map[string]any{"phase": "kg"}, "other": map[string]any{"phase": "kg"}}}}
	st := runAgentFlow(t, flow, react, nil, vars)
	tmp, _ := st.Vars["_temp"].(map[string]any)
	ms, _ := tmp["memory_sources"].(map[string]any)
	if _, has := ms["ag"]; has {
		t.Errorf("_temp.memory_sources = %s; the agent's own entry must be cleared on entry", jsonText(t, ms))
	}
	if _, has := ms["other"]; !has {
		t.Errorf("_temp.memory_sources = %s; another node's entry must stay", jsonText(t, ms))
	}
}

// A bucket saved by an earlier version kept the context pin as
// resolved_inputs.context_extra instead of context; continuing such a run,
// the scratchpad still gets the extra context keys (spec §5.6 scratchpad
// context_extra). Dropping the fallback would lose them.
func TestAgentSavedBucketContextExtraKeptInScratchpad(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-ce"}},
		[]string{"prompt:string"})
	saved := map[string]any{
		"phase": "subworkflow",
		"resolved_inputs": map[string]any{"task": "do it", "context_extra": map[string]any{"topic": "x"},
			"provider": nil, "model": nil, "system": "", "tools": []any{}},
		"sub": map[string]any{"sub_run_id": "child-1", "output": map[string]any{"answer": "A", "iterations": int64(1),
			"messages": []any{}}, "node_traces": map[string]any{}},
	}
	never := outputReact("react-ce", map[string]any{"answer": "child started again"}, nil)
	st := runAgentFlow(t, flow, never, nil, map[string]any{"_temp": map[string]any{"agent": map[string]any{"ag": saved}}})
	if st.Output["r"] != "A" {
		t.Fatalf("agent.response = %#v, want the saved child's answer A", st.Output["r"])
	}
	sp, _ := agentBucketOf(st, "ag")["scratchpad"].(map[string]any)
	if got, want := jsonText(t, sp["context_extra"]), jsonText(t, map[string]any{"topic": "x"}); got != want {
		t.Errorf("bucket scratchpad.context_extra = %s, want %s from the saved context_extra", got, want)
	}
}

// A ReAct child that reports no messages list gets the minimal transcript
// (spec §5.6 phase subworkflow: "if absent → [user task?, assistant
// answer?]"): the scratchpad's messages are the task as user, then the
// answer as assistant; a blank task adds no user message.
func TestAgentChildWithoutMessagesGetsTaskAndAnswerTranscript(t *testing.T) {
	for task, want := range map[string][]any{
		"do it": {chatMsg("user", "do it"), chatMsg("assistant", "A")},
		"  ":    {chatMsg("assistant", "A")},
	} {
		flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": task},
			"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-tr"}},
			[]string{"prompt:string"})
		react := outputReact("react-tr", map[string]any{"answer": "A", "iterations": int64(1)}, nil)
		st := runAgentFlow(t, flow, react, nil, nil)
		sp, _ := agentBucketOf(st, "ag")["scratchpad"].(map[string]any)
		if got, w := jsonText(t, sp["messages"]), jsonText(t, want); got != w {
			t.Errorf("task %q: scratchpad.messages = %s\nwant %s", task, got, w)
		}
	}
}

// A structured agent's meta still names the ReAct child run (spec §5.6
// meta sub_run_id?, kept by phase structured from the scratchpad), so a
// host can find the child run behind a structured answer.
func TestAgentStructuredMetaKeepsSubRunID(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-sr",
			"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}},
		[]string{"prompt:string"})
	react := outputReact("react-sr", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
	st := runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	sub, _ := agentBucketOf(st, "ag")["sub_run_id"].(string)
	if sub == "" {
		t.Fatalf("agent bucket has no sub_run_id: %s", jsonText(t, agentBucketOf(st, "ag")))
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs["ag"].(map[string]any)
	meta, _ := rec["meta"].(map[string]any)
	if meta["output_mode"] != "structured" || meta["sub_run_id"] != sub {
		t.Errorf("structured meta = %s; want output_mode structured and sub_run_id %q", jsonText(t, meta), sub)
	}
}

// As Python rebuilds the agent's pins from _temp.effects.<N> (the data of a
// structured agent), a `provider` or `model` field of the data overrides
// the meta pin's (agentPins), while the bus keeps the handler's meta.
func TestAgentStructuredDataProviderOverridesMetaPin(t *testing.T) {
	meta := structuredMetaPin(t, map[string]any{"provider": " dp ", "model": "dm"})
	if meta["provider"] != "dp" || meta["model"] != "dm" {
		t.Errorf("meta pin provider/model = %#v/%#v, want the data's stripped dp/dm", meta["provider"], meta["model"])
	}
}

// structuredMetaPin runs a structured agent whose structured pass answers
// data, and returns the meta pin it leaves in the node outputs.
func structuredMetaPin(t *testing.T, data map[string]any) map[string]any {
	t.Helper()
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-dp",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
		[]string{"prompt:string"})
	llm := &scripted{results: []any{map[string]any{"data": data}}}
	react := outputReact("react-dp", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs["ag"].(map[string]any)
	meta, _ := rec["meta"].(map[string]any)
	return meta
}

// savedAgentRun continues a run saved with the agent bucket in phase
// subworkflow, include_context on and the child's result sub, the parent
// context holding msgs; it returns the run's state.
func savedAgentRun(t *testing.T, sub map[string]any, msgs []any) *durable.RunState {
	t.Helper()
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-sv"}},
		[]string{"prompt:string"})
	saved := map[string]any{"phase": "subworkflow", "sub": sub,
		"resolved_inputs": map[string]any{"task": "do it", "context": map[string]any{}, "provider": nil, "model": nil,
			"system": "", "tools": []any{}, "include_context": true}}
	never := outputReact("react-sv", map[string]any{"answer": "child started again"}, nil)
	return runAgentFlow(t, flow, never, nil, map[string]any{"_temp": map[string]any{"agent": map[string]any{"ag": saved}},
		"context": map[string]any{"messages": msgs}})
}

// A child result whose sub_run_id is an empty string still appends the
// agent turn, its message ids naming the parent run instead
// (agent:<run id>:<node>:task|answer), so they stay unique per run.
func TestAgentTurnWithoutSubRunIDUsesRunIDInMessageIDs(t *testing.T) {
	st := savedAgentRun(t, map[string]any{"sub_run_id": "", "output": map[string]any{"answer": "A", "messages": []any{}}}, []any{})
	msgs := parentMessages(st)
	var ids []any
	for _, m := range msgs {
		md, _ := m.(map[string]any)["metadata"].(map[string]any)
		ids = append(ids, md["message_id"])
	}
	want := []any{"agent:" + st.RunID + ":ag:task", "agent:" + st.RunID + ":ag:answer"}
	if jsonText(t, ids) != jsonText(t, want) {
		t.Errorf("parent message ids = %s, want %s", jsonText(t, ids), jsonText(t, want))
	}
}

// A turn whose message ids are already in the parent context is not
// appended again (message ids keep each message once, spec §5.6), even
// when the bucket does not mark the sub run as appended.
func TestAgentTurnAlreadyInContextIsNotDuplicated(t *testing.T) {
	task := map[string]any{"role": "user", "content": "do it", "metadata": map[string]any{"kind": "agent_turn",
		"node_id": "ag", "message_id": "agent:child-1:ag:task", "sub_run_id": "child-1"}}
	st := savedAgentRun(t, map[string]any{"sub_run_id": "child-1", "output": map[string]any{"answer": "A", "messages": []any{}}},
		[]any{task})
	msgs := parentMessages(st)
	if len(msgs) != 2 {
		t.Fatalf("parent context.messages = %s, want the existing task once, then the answer", jsonText(t, msgs))
	}
	md, _ := msgs[1].(map[string]any)["metadata"].(map[string]any)
	if md["message_id"] != "agent:child-1:ag:answer" {
		t.Errorf("second message id = %v, want agent:child-1:ag:answer", md["message_id"])
	}
}

// A child result without a sub_run_id appends no agent turn to the parent
// context, as in Python, where the absent sub run id equals the bucket's
// unset "already appended" marker (context_appended_sub_run_id).
func TestAgentTurnWithoutSubRunIsNotAppended(t *testing.T) {
	st := savedAgentRun(t, map[string]any{"output": map[string]any{"answer": "A", "messages": []any{}}}, []any{})
	if msgs := parentMessages(st); len(msgs) != 0 {
		t.Errorf("parent context.messages = %s, want none for a child result without sub_run_id", jsonText(t, msgs))
	}
}
