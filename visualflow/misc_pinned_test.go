package visualflow

import (
	"errors"
	"testing"
)

// The ReAct placeholder does not repeat the task: when the context's last
// message already is the task as a user message, no second copy is added.
func TestReactMessagesDoNotRepeatTask(t *testing.T) {
	vars := map[string]any{"context": map[string]any{"task": "t", "messages": []any{chatMsg("user", "t")}}}
	if got := reactMessages(vars); len(got) != 1 {
		t.Fatalf("reactMessages = %s, want the single existing task message", jsonText(t, got))
	}
}

// A present keep_in_context pin decides even when null (no keep): only an
// absent pin falls back to the node's config.
func TestMemoryNoteNullKeepPinDoesNotFallBackToConfig(t *testing.T) {
	p := memoryPayload("memory_note", map[string]any{"content": "n", "keep_in_context": nil}, map[string]any{"keep_in_context": true})
	if v, has := p["keep_in_context"]; has {
		t.Fatalf("keep_in_context = %#v, want absent (null pin wins over config)", v)
	}
}

// A CompileError without a message of its own shows its cause's text alone,
// not an empty message followed by ": cause".
func TestCompileErrorWithOnlyCauseShowsCause(t *testing.T) {
	e := &CompileError{Flow: "f", Err: errors.New("boom")}
	if got := e.Error(); got != "flow f: boom" {
		t.Fatalf("Error() = %q, want %q", got, "flow f: boom")
	}
}

// AgentInfo.Tools lists agentConfig.tools only when it is a list, as the
// reference's host reads it when registering ReAct workflows: a single
// string gives no tools.
func TestAgentInfoToolsNeedAList(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "tools": "read_file"}
	flow := rsFlow("vfe_tools", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec"}, []string{"exec-out:exec"}, map[string]any{"agentConfig": cfg}),
	}, "start.exec-out>ag.exec-in")
	b := vfbundleOneFlowBundle(flow)
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range cb.Flows {
		for _, a := range fi.Agents {
			if len(a.Tools) != 0 {
				t.Fatalf("agent %s tools = %v, want none for a non-list agentConfig.tools", a.NodeID, a.Tools)
			}
		}
	}
}
