package visualflow

import (
	"regexp"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// add_message's message is {role: str(role) ("user" only when null),
// content, timestamp, metadata: {message_id: "msg_" + 32 hex}} (§6.6): an
// empty role stays empty, and every message carries its id.
func TestAddMessageKeepsEmptyRoleAndSetsMessageID(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("am", "add_message", []string{"exec-in:exec", "role:string", "content:string"},
			[]string{"exec-out:exec", "message:object", "context:object", "task:string", "messages:array"},
			map[string]any{"pinDefaults": map[string]any{"role": "", "content": "hi"}}),
	}, "start.exec-out>am.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("context.messages = %s, want one message", jsonText(t, ctx["messages"]))
	}
	m, _ := msgs[0].(map[string]any)
	if m["role"] != "" {
		t.Errorf("role = %s, want \"\" (only a null role defaults to user)", jsonText(t, m["role"]))
	}
	md, _ := m["metadata"].(map[string]any)
	if id, _ := md["message_id"].(string); !regexp.MustCompile(`^msg_[0-9a-f]{32}$`).MatchString(id) {
		t.Errorf("metadata = %s, want message_id msg_ + 32 hex", jsonText(t, md))
	}
}

// memact_compose's kg_result is the pin, else resolved raw, else resolved
// result (§6.8): an object under raw or result is a KG result, so the node
// reports the missing MemAct module, not a missing dict. Reading only
// kg_result and result would call memory_kg_query.raw, the documented
// source, "not a dict".
func TestMemactReadsRawOrResultAsKGResult(t *testing.T) {
	for _, pin := range []string{"raw", "result"} {
		w := rsNode("w", "memact_compose", []string{"exec-in:exec", pin + ":object"},
			[]string{"exec-out:exec", "ok:boolean"}, map[string]any{"pinDefaults": map[string]any{pin: map[string]any{"packets": []any{}}}})
		_, st := startRunWith(t, terminalWriterFlow(w), CompileOptions{}, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status = %s (%s), want completed", pin, st.Status, st.Error)
		}
		if e, _ := st.Output["error"].(string); !strings.Contains(e, "not supported") {
			t.Errorf("%s: error = %q, want the unsupported-module error for an object %s", pin, e, pin)
		}
	}
}
