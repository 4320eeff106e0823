package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// outputKeyFlow is start → <effect node "fx" with outputKey "saved"> → end.
func outputKeyFlow(nodeType, pins string) string {
	return `{"id":"ok","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"fx","type":"` + nodeType + `","data":{"outputKey":"saved",` + pins + `}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"fx","targetHandle":"exec-in"},
 {"source":"fx","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"}]}`
}

// TestOutputKeyWritesTheMappedValue: the value an effect node writes
// at its outputKey is the node's "mapped value" (spec §1.3, §5.3). The
// reference (_sync_effect_results_to_node_outputs) writes raw.message for
// answer_user, the matches list (pin `results`) for memory_query, and the
// span id (pin `note_id`) for memory_note. The port writes the whole pin
// record for answer_user and memory_note, and `rendered` for memory_query.
func TestOutputKeyWritesTheMappedValue(t *testing.T) {
	t.Parallel()
	scriptedResult := func(r any) runtime.Handler {
		return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(r), nil
		}}
	}
	cases := []struct {
		name, nodeType, pins string
		handlers             map[durable.EffectType]runtime.Handler
		want                 any
	}{
		{
			name: "answer_user", nodeType: "answer_user",
			pins: `"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],
			  "outputs":[{"id":"exec-out","type":"execution"},{"id":"message","type":"string"}],"pinDefaults":{"message":"hi"}`,
			want: "hi",
		},
		{
			name: "memory_query", nodeType: "memory_query",
			pins: `"inputs":[{"id":"exec-in","type":"execution"},{"id":"query","type":"string"}],
			  "outputs":[{"id":"exec-out","type":"execution"},{"id":"results","type":"array"},{"id":"rendered","type":"string"}],"pinDefaults":{"query":"q"}`,
			handlers: map[durable.EffectType]runtime.Handler{durable.EffectMemoryQuery: scriptedResult(map[string]any{
				"mode": "executed", "results": []any{map[string]any{"success": true, "output": "rendered text",
					"meta": map[string]any{"matches": []any{map[string]any{"span_id": "s1"}}, "span_ids": []any{"s1"}}}},
			})},
			want: []any{map[string]any{"span_id": "s1"}},
		},
		{
			name: "memory_note", nodeType: "memory_note",
			pins: `"inputs":[{"id":"exec-in","type":"execution"},{"id":"content","type":"string"}],
			  "outputs":[{"id":"exec-out","type":"execution"},{"id":"note_id","type":"string"}],"pinDefaults":{"content":"remember"}`,
			handlers: map[durable.EffectType]runtime.Handler{durable.EffectMemoryNote: scriptedResult(map[string]any{
				"mode": "executed", "results": []any{map[string]any{"success": true, "output": "ok",
					"meta": map[string]any{"span_id": "span-1"}}},
			})},
			want: "span-1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wf, err := Compile(mustFlow(t, outputKeyFlow(tc.nodeType, tc.pins)), CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rt := newTestRuntime(t, memory.New(), tc.handlers, wf)
			ctx := context.Background()
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
			if err != nil {
				t.Fatal(err)
			}
			st, err := rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			if got, want := jsonText(t, st.Vars["saved"]), jsonText(t, tc.want); got != want {
				t.Fatalf("vars.saved (outputKey) = %s, want the mapped value %s", got, want)
			}
		})
	}
}

// TestAgentWithoutAnswerRespondsEmpty: after the ReAct child
// the reference computes answer = str(output.get("answer") or "") (both
// stored versions of compiler.py). A child that completes without an
// answer (or with answer null) must give the agent response "", not the
// text "None" that pyval.Str(nil) produces.
func TestAgentWithoutAnswerRespondsEmpty(t *testing.T) {
	t.Parallel()
	react := &runtime.Workflow{ID: "react-ag", Entry: "done", Nodes: map[string]runtime.NodeFunc{
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": nil, "iterations": int64(3), "messages": []any{}}), nil
		},
	}}
	_, st := runFlows(t, []string{agentFlow(false, "response")}, []*runtime.Workflow{react}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if got := st.Output["r"]; got != "" {
		t.Fatalf("agent.response = %#v, want \"\" (reference: str(output.get('answer') or ''))", got)
	}
}

// TestAgentEmptyAnswerNotAppendedToContext: with
// include_context the agent appends its turn to the parent's
// context.messages; the reference's _append strips the text and skips it
// when empty (text = str(content or "").strip(); if not text: return),
// so an agent whose child answered "" adds no empty assistant message to
// the history every later LLM call of the run is sent.
func TestAgentEmptyAnswerNotAppendedToContext(t *testing.T) {
	t.Parallel()
	flow := `{"id":"agc","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"agent","type":"agent","data":{
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],
   "pinDefaults":{"prompt":"do it"},
   "agentConfig":{"provider":"p","model":"m","include_context":true,"_react_workflow_id":"react-agc"}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"agent","targetHandle":"exec-in"}]}`
	_, st := runFlows(t, []string{flow}, []*runtime.Workflow{fakeReact("react-agc", "")}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	for _, m := range msgs {
		if o, _ := m.(map[string]any); o["role"] == "assistant" && o["content"] == "" {
			t.Fatalf("parent context.messages got an empty assistant message: %s", jsonText(t, msgs))
		}
	}
}

// TestLLMContextAttachmentsCleaned: with include_context
// the run's context.attachments become the llm_call `media`. The
// reference (compiler.py, "forward them into the LLM call as media")
// keeps dicts (copied) and non-blank strings (trimmed), drops anything
// else, and sets no `media` when nothing is left. The port forwards the
// list verbatim: blank strings, untrimmed paths and non-string scalars
// reach the LLM handler.
func TestLLMContextAttachmentsCleaned(t *testing.T) {
	t.Parallel()
	flow := `{"id":"llmatt","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"llm","type":"llm_call","data":{
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"},{"id":"use_context","type":"boolean"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],
   "pinDefaults":{"prompt":"now","use_context":true}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"llm","targetHandle":"exec-in"}]}`
	vars := map[string]any{"context": map[string]any{
		"messages":    []any{map[string]any{"role": "user", "content": "earlier"}},
		"attachments": []any{"  /tmp/a.png  ", "   ", int64(5), map[string]any{"$artifact": "x"}},
	}}
	llm := &scripted{results: []any{map[string]any{"content": "hi"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, vars)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if len(llm.payloads) != 1 {
		t.Fatalf("llm calls = %d", len(llm.payloads))
	}
	want := []any{"/tmp/a.png", map[string]any{"$artifact": "x"}}
	if got, w := jsonText(t, llm.payloads[0]["media"]), jsonText(t, want); got != w {
		t.Fatalf("llm_call media = %s\nwant %s (dicts kept, non-blank strings trimmed, others dropped)", got, w)
	}
}
