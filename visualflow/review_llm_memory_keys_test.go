package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The reference llm_call builder (executor.py _create_llm_call_handler)
// passes the memory-source settings through on the pending effect: the
// use_* switches as _coerce_bool(value) whenever their pin key is present
// (so a pin connected to null is False), else the memory object's non-null
// value; the other settings verbatim. The compiler then maps the
// use_session_attachments bool to params.include_session_attachments_index
// and leaves every key in the LLM_CALL payload.

// A use_session_attachments pin connected to null is False in Python, so
// the call asks for no session attachment index; it is not "unset".
func TestReviewLLMCallNullUseSessionAttachmentsPinIsFalse(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","use_session_attachments":null,"memory":{"use_session_attachments":true}}`, `{}`)
	params, _ := p["params"].(map[string]any)
	if got, has := params["include_session_attachments_index"]; !has || got != false {
		t.Fatalf("params.include_session_attachments_index = %v (present %v), want false", got, has)
	}
	if got, has := p["use_session_attachments"]; !has || got != false {
		t.Fatalf("payload use_session_attachments = %v (present %v), want false", got, has)
	}
}

// An unreadable memory-object value ("maybe") is _coerce_bool'd to False.
func TestReviewLLMCallMemoryObjectUnknownStringIsFalse(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","memory":{"use_session_attachments":"maybe"}}`, `{}`)
	params, _ := p["params"].(map[string]any)
	if got, has := params["include_session_attachments_index"]; !has || got != false {
		t.Fatalf("params.include_session_attachments_index = %v (present %v), want false", got, has)
	}
}

// The memory settings ride on the LLM_CALL payload as top-level keys, as
// in the payload the reference records.
func TestReviewLLMCallMemorySettingsAreInPayload(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","recall_level":"deep","memory":{"use_span_memory":"yes","use_kg_memory":false,"memory_scope":"session","recall_level":"urgent","kg_limit":80,"kg_min_score":null,"kg_write_scope":"session"}}`, `{}`)
	want := map[string]any{"use_span_memory": true, "use_kg_memory": false, "memory_scope": "session", "recall_level": "deep", "kg_limit": int64(80)}
	for k, w := range want {
		if got := p[k]; jsonText(t, got) != jsonText(t, w) {
			t.Errorf("payload %s = %s, want %s", k, jsonText(t, got), jsonText(t, w))
		}
	}
	for _, k := range []string{"kg_min_score", "kg_write_scope", "use_session_attachments", "memory"} {
		if v, has := p[k]; has {
			t.Errorf("payload %s = %s, want absent", k, jsonText(t, v))
		}
	}
}

// The agent's normaliser coerces a present use_session_attachments pin the
// same way, and its handler passes bool(...) on as the child's
// _runtime.control: a pin connected to null asks for no index.
func TestReviewAgentNullUseSessionAttachmentsPinIsFalse(t *testing.T) {
	t.Parallel()
	src := strings.Replace(agentWiredFlow("", "response"), `"pinDefaults":{"prompt":"do it"}`,
		`"pinDefaults":{"prompt":"do it","use_session_attachments":null,"memory":{"use_session_attachments":true}}`, 1)
	var child map[string]any
	_, st := runFlows(t, []string{src}, []*runtime.Workflow{captureReact("react-x", &child, nil)}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	crt, _ := child["_runtime"].(map[string]any)
	if got, want := jsonText(t, crt["control"]), jsonText(t, map[string]any{"include_session_attachments_index": false}); got != want {
		t.Fatalf("child _runtime.control = %s, want %s", got, want)
	}
}
