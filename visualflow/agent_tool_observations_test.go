package visualflow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// toolReact is a ReAct stand-in that runs one tool_calls effect with calls
// (so the child's node traces hold the tool activity, as a real ReAct
// loop's do) and completes with answer.
func toolReact(id string, calls []any, answer string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			eff := &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{"tool_calls": calls}, ResultKey: "_temp.tools"}
			return runtime.Request(eff, "done"), nil
		},
		"done": outputReact(id, map[string]any{"answer": answer, "iterations": int64(2), "messages": []any{}}, nil).Nodes["done"],
	}}
}

// toolsHandler answers the child's tool_calls effect with results.
func toolsHandler(results []any) map[durable.EffectType]runtime.Handler {
	tools := &scripted{results: []any{map[string]any{"mode": "executed", "results": results}}}
	return map[durable.EffectType]runtime.Handler{durable.EffectToolCalls: tools.handler()}
}

// includeContextAgentFlow is start -> agent -> end with include_context
// set to include.
func includeContextAgentFlow(reactID string, include bool) map[string]any {
	return pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "find it", "include_context": include},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": reactID},
	}, []string{"prompt:string", "include_context:boolean"})
}

func parentMessages(st *durable.RunState) []any {
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	return msgs
}

// With include_context the agent appends, between the task and the answer,
// one assistant message per tool result of its ReAct child, as Python's
// handler does (phase "subworkflow", _append_tool_observations): content
// "[<tool>]: args=<sorted JSON>\n<output>" (pretty JSON for an object
// output) or "[<tool>]: Error: <error>", metadata {kind:"tool_observation",
// node_id, message_id:"agent:<sub_run_id>:<node>:tool:<call_id or index>",
// tool_name, success, call_id?, sub_run_id}. An outer loop re-invoking the
// agent then sees the evidence and does not repeat the calls.
func TestAgentAppendsToolObservationsToParentContext(t *testing.T) {
	calls := []any{
		map[string]any{"call_id": "c1", "name": "read_file", "arguments": map[string]any{"path": "a.txt", "limit": int64(2)}},
		map[string]any{"call_id": "c2", "name": "search", "arguments": map[string]any{}},
		map[string]any{"name": "ls", "arguments": map[string]any{"dir": "."}},
	}
	results := []any{
		map[string]any{"call_id": "c1", "name": "read_file", "success": true, "output": "  hello\n", "error": nil},
		map[string]any{"call_id": "c2", "name": "search", "success": false, "output": nil, "error": "no index"},
		map[string]any{"name": "ls", "success": true, "output": map[string]any{"files": []any{"a.txt"}}},
	}
	st := runAgentFlow(t, includeContextAgentFlow("react-obs", true), toolReact("react-obs", calls, "it is hello"),
		toolsHandler(results), map[string]any{"context": map[string]any{"messages": []any{}}})

	msgs := parentMessages(st)
	if len(msgs) != 5 {
		t.Fatalf("parent context.messages = %s\nwant task, 3 tool observations, answer", jsonText(t, msgs))
	}
	first, _ := msgs[0].(map[string]any)
	md, _ := first["metadata"].(map[string]any)
	sub, _ := md["sub_run_id"].(string)
	if sub == "" {
		t.Fatalf("task message metadata = %s, want a sub_run_id", jsonText(t, md))
	}
	prefix := "agent:" + sub + ":ag:"
	obs := func(id, name, content string, success bool, callID string) map[string]any {
		md := map[string]any{"kind": "tool_observation", "node_id": "ag", "message_id": prefix + id, "tool_name": name,
			"success": success, "sub_run_id": sub}
		if callID != "" {
			md["call_id"] = callID
		}
		return map[string]any{"role": "assistant", "content": content, "metadata": md}
	}
	turn := func(role, content, id string) map[string]any {
		return map[string]any{"role": role, "content": content, "metadata": map[string]any{"kind": "agent_turn",
			"node_id": "ag", "message_id": prefix + id, "sub_run_id": sub}}
	}
	want := []any{
		turn("user", "find it", "task"),
		obs("tool:c1", "read_file", "[read_file]: args={\"limit\": 2, \"path\": \"a.txt\"}\nhello", true, "c1"),
		// Empty arguments are not shown; a failure shows its error.
		obs("tool:c2", "search", "[search]: Error: no index", false, "c2"),
		// No call_id: the id is the result's index and no arguments are matched.
		obs("tool:2", "ls", "[ls]: {\n  \"files\": [\n    \"a.txt\"\n  ]\n}", true, ""),
		turn("assistant", "it is hello", "answer"),
	}
	if got := jsonText(t, msgs); got != jsonText(t, want) {
		t.Errorf("parent context.messages =\n%s\nwant\n%s", got, jsonText(t, want))
	}
	if b := agentBucketOf(st, "ag"); b["context_appended_sub_run_id"] != sub {
		t.Errorf("bucket context_appended_sub_run_id = %#v, want %q (Python's marker)", b["context_appended_sub_run_id"], sub)
	}
}

// Python keeps at most 20 tool observations per turn, each truncated to
// 2000 characters with a "… (truncated, N chars total)" suffix, and
// summarises the rest in one message {kind:"tool_observation_summary",
// message_id:"agent:<sub>:<node>:tool:omitted"}.
func TestAgentToolObservationsBoundedAndTruncated(t *testing.T) {
	var calls, results []any
	for i := range 23 {
		id := fmt.Sprintf("c%d", i)
		calls = append(calls, map[string]any{"call_id": id, "name": "t", "arguments": map[string]any{}})
		out := "ok"
		if i == 0 {
			out = strings.Repeat("x", 2500)
		}
		results = append(results, map[string]any{"call_id": id, "name": "t", "success": true, "output": out})
	}
	st := runAgentFlow(t, includeContextAgentFlow("react-many", true), toolReact("react-many", calls, "done"),
		toolsHandler(results), nil)
	msgs := parentMessages(st)
	if len(msgs) != 1+20+1+1 {
		t.Fatalf("parent context.messages: %d, want task, 20 observations, summary, answer: %s", len(msgs), jsonText(t, msgs))
	}
	first, _ := msgs[1].(map[string]any)
	content, _ := first["content"].(string)
	suffix := "\n… (truncated, 2,500 chars total)"
	if !strings.HasSuffix(content, suffix) || len([]rune(content)) != len("[t]: ")+2000 {
		t.Errorf("long observation = %q…%q (%d chars); want the first 2000 chars of the details ending %q",
			content[:20], content[len(content)-40:], len([]rune(content)), suffix)
	}
	summary, _ := msgs[21].(map[string]any)
	md, _ := summary["metadata"].(map[string]any)
	sub, _ := md["sub_run_id"].(string)
	wantContent := "[tools]: (omitted 3 additional tool results for brevity; see sub_run_id=" + sub + ")"
	if sub == "" || summary["role"] != "assistant" || summary["content"] != wantContent ||
		md["kind"] != "tool_observation_summary" || md["node_id"] != "ag" || md["message_id"] != "agent:"+sub+":ag:tool:omitted" {
		t.Errorf("summary message = %s; want role assistant, content %q, kind tool_observation_summary, message_id agent:<sub>:ag:tool:omitted",
			jsonText(t, summary), wantContent)
	}
}

// A child without tool calls adds only the task and the answer, as before.
func TestAgentWithoutToolCallsAppendsOnlyTurn(t *testing.T) {
	react := outputReact("react-none", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, includeContextAgentFlow("react-none", true), react, nil, nil)
	msgs := parentMessages(st)
	if len(msgs) != 2 {
		t.Fatalf("parent context.messages = %s, want the task and the answer only", jsonText(t, msgs))
	}
	for i, role := range []string{"user", "assistant"} {
		o, _ := msgs[i].(map[string]any)
		md, _ := o["metadata"].(map[string]any)
		if o["role"] != role || md["kind"] != "agent_turn" {
			t.Errorf("message %d = %s, want a %s agent_turn", i, jsonText(t, o), role)
		}
	}
}

// Without include_context nothing reaches the parent context, tool
// observations included.
func TestAgentWithoutIncludeContextAppendsNothing(t *testing.T) {
	calls := []any{map[string]any{"call_id": "c1", "name": "t", "arguments": map[string]any{"q": "x"}}}
	results := []any{map[string]any{"call_id": "c1", "name": "t", "success": true, "output": "r"}}
	earlier := []any{map[string]any{"role": "user", "content": "earlier"}}
	st := runAgentFlow(t, includeContextAgentFlow("react-off", false), toolReact("react-off", calls, "A"),
		toolsHandler(results), map[string]any{"context": map[string]any{"messages": earlier}})
	if got := jsonText(t, parentMessages(st)); got != jsonText(t, earlier) {
		t.Errorf("parent context.messages = %s, want them unchanged %s", got, jsonText(t, earlier))
	}
	if _, ok := agentBucketOf(st, "ag")["context_appended_sub_run_id"]; ok {
		t.Errorf("bucket has context_appended_sub_run_id without include_context (Python sets it only when appending)")
	}
}

// Exactly maxToolObservations (20) results are all rendered and need no
// summary: the "omitted N additional tool results" message appears only
// when some results are left out.
func TestAgentToolObservationsExactlyTwentyHaveNoSummary(t *testing.T) {
	var results []any
	for i := range maxToolObservations {
		results = append(results, map[string]any{"call_id": fmt.Sprintf("c%d", i), "name": "t", "success": true, "output": "ok"})
	}
	out := agentToolObservations("ag", "agent:sub:ag:", "sub", nil, results)
	if len(out) != maxToolObservations {
		t.Fatalf("observations of %d results: %d messages, want %d and no summary: %v", maxToolObservations, len(out), maxToolObservations, out)
	}
	if md, _ := out[len(out)-1]["metadata"].(map[string]any); md["kind"] != "tool_observation" {
		t.Errorf("last message kind = %v, want tool_observation (no summary)", md["kind"])
	}
}
