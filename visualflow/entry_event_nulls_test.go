package visualflow

import (
	"strconv"
	"testing"
)

// on_user_request / on_agent_message keep a null the caller passed. The
// reference's event handler (visual/executor.py _create_event_handler)
// reads the vars with dict.get and a default, which applies only to a
// missing key:
//
//	message = input_data.get("message", "") if isinstance(input_data, dict) else str(input_data)
//	context = input_data.get("context", {}) if isinstance(input_data, dict) else {}
//	sender = input_data.get("sender", "unknown") if isinstance(input_data, dict) else "unknown"
//	channel = data.get("eventConfig", {}).get("channel", "")
//
// Ours replaced a present null by the default, so a start with
// {"message": null} output "" where Python outputs null, and downstream
// str()-based nodes then differed ("None" vs "").
func TestEntryEventNodesKeepCallerNulls(t *testing.T) {
	cases := []struct {
		name, typ, pins string
		vars            map[string]any
		want            map[string]any
	}{
		{"on_user_request null", "on_user_request", `, {"id": "message", "type": "string"}, {"id": "context", "type": "object"}`,
			map[string]any{"message": nil, "context": nil},
			map[string]any{"message": nil, "context": nil, "success": true}},
		{"on_user_request absent", "on_user_request", `, {"id": "message", "type": "string"}, {"id": "context", "type": "object"}`,
			map[string]any{},
			map[string]any{"message": "", "context": map[string]any{}, "success": true}},
		{"on_agent_message null", "on_agent_message", `, {"id": "sender", "type": "string"}, {"id": "message", "type": "string"}`,
			map[string]any{"sender": nil, "message": nil},
			map[string]any{"sender": nil, "message": nil, "success": true}},
		{"on_agent_message absent", "on_agent_message", `, {"id": "sender", "type": "string"}, {"id": "message", "type": "string"}`,
			map[string]any{},
			map[string]any{"sender": "unknown", "message": "", "success": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := runFlowOnce(t, entryEventFlow(tc.typ, "", tc.pins), tc.vars)
			if got, want := jsonText(t, st.Output), jsonText(t, tc.want); got != want {
				t.Fatalf("output = %s, want %s (status %s)", got, want, st.Status)
			}
		})
	}
}

// on_agent_message's channel is eventConfig.get("channel", "") in the
// reference: a configured null (or non-string) channel is kept, only an
// absent one becomes "". Ours read it as a string, else "".
func TestAgentMessageChannelKeptAsConfigured(t *testing.T) {
	pins := `, {"id": "channel", "type": "string"}`
	for _, tc := range []struct{ name, cfg, want string }{
		{"null", `{"channel": null}`, `null`},
		{"number", `{"channel": 7}`, `7`},
		{"absent", `{}`, `""`},
		{"string", `{"channel": "ops"}`, `"ops"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := runFlowOnce(t, entryEventFlow("on_agent_message", `"eventConfig": `+tc.cfg+`, `, pins), map[string]any{})
			if got := jsonText(t, st.Output["channel"]); got != tc.want {
				t.Fatalf("channel = %s, want %s (output %s)", got, tc.want, jsonText(t, st.Output))
			}
		})
	}
}

// on_agent_message reached with a non-object bus (after a code node that
// returned a string): the reference's handler takes message =
// str(input_data) and sender "unknown", as on_user_request does. Ours
// read the message of a nil map and output "".
func TestAgentMessageFromScalarBus(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"string", `return "hi"`, `"hi"`},
		{"number", `return 5`, `"5"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := runFlowOnce(t, `{"id": "f", "entryNode": "start", "nodes": [
			  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
			  {"id": "code", "type": "code", "data": {"codeBody": `+strconv.Quote(tc.body)+`,
			    "inputs": [{"id": "exec-in", "type": "execution"}],
			    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
			  {"id": "msg", "type": "on_agent_message", "data": {
			    "inputs": [{"id": "exec-in", "type": "execution"}],
			    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "sender", "type": "string"}, {"id": "message", "type": "string"}]}},
			  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "sender", "type": "string"}, {"id": "message", "type": "string"}]}}
			], "edges": [
			  {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
			  {"source": "code", "sourceHandle": "exec-out", "target": "msg", "targetHandle": "exec-in"},
			  {"source": "msg", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
			  {"source": "msg", "sourceHandle": "sender", "target": "end", "targetHandle": "sender"},
			  {"source": "msg", "sourceHandle": "message", "target": "end", "targetHandle": "message"}
			]}`, map[string]any{})
			want := `{"message": ` + tc.want + `, "sender": "unknown", "success": true}`
			if got := jsonText(t, st.Output); got != jsonText(t, mustJSON(t, want)) {
				t.Fatalf("output = %s, want %s (status %s, %s)", got, want, st.Status, st.Error)
			}
		})
	}
}

// entryEventFlow is an entry node of type typ (extra data fields
// dataExtra, each followed by ", ") whose data pins (pins, a JSON list
// tail) feed an on_flow_end with the same pins.
func entryEventFlow(typ, dataExtra, pins string) string {
	return `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "` + typ + `", "data": {` + dataExtra + `"outputs": [{"id": "exec-out", "type": "execution"}` + pins + `]}},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}` + pins + `]}}
	], "edges": [{"source": "start", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"}]}`
}
