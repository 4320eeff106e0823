package visualflow

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// emitPayloads runs start → emit (pins name/scope/payload/session_id as
// given by defaults, config cfg) and returns the emit_event payloads found
// in the ledger, with the run id.
func emitPayloads(t *testing.T, defaults, cfg map[string]any) ([]map[string]any, string) {
	t.Helper()
	in := []string{"exec-in:exec", "name:string", "scope:string", "payload:any", "session_id:string"}
	out := []string{"exec-out:exec", "delivered:number"}
	flow := rsFlow("emit_shape", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("emit", "emit_event", in, out, map[string]any{"pinDefaults": defaults, "effectConfig": cfg}),
	}, "start.exec-out>emit.exec-in")
	rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	recs, err := rt.GetLedger(context.Background(), st.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var ps []map[string]any
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectEmitEvent && r.Status == durable.StepStarted {
			ps = append(ps, r.Effect.Payload)
		}
	}
	if len(ps) == 0 {
		for _, r := range recs {
			if r.Effect != nil && r.Effect.Type == durable.EffectEmitEvent {
				ps = append(ps, r.Effect.Payload)
				break
			}
		}
	}
	if len(ps) == 0 {
		t.Fatalf("no emit_event effect in the ledger: %v", ledgerKinds(recs))
	}
	return ps, st.RunID
}

// Spec §5.7 / §6.1 (`emit_event`); Python
// visualflow_compiler/adapters/event_adapter.py create_emit_event_node_handler:
// a non-object payload is wrapped {value}, null → {}; scope is
// lower-cased/trimmed and anything unknown is "session"; a blank
// session_id pin sends no session_id; event_id is
// "<run_id>:<node_id>:<seq>" with seq from 1; max_steps 0.
func TestEmitEventPayloadShape(t *testing.T) {
	ps, st0 := emitPayloads(t, map[string]any{"name": " ping ", "scope": " GLOBAL ", "payload": int64(5), "session_id": "  "},
		map[string]any{"sessionId": "cfg-session"})
	p := ps[0]
	if p["name"] != "ping" || p["scope"] != "global" || jsonText(t, p["payload"]) != jsonText(t, map[string]any{"value": int64(5)}) {
		t.Errorf("payload = %s, want name ping, scope global, payload {value: 5}", jsonText(t, p))
	}
	if _, has := p["session_id"]; has {
		t.Errorf("blank session_id pin: payload %s carries session_id (Python drops a blank pin and ignores the config)", jsonText(t, p))
	}
	if id, _ := p["event_id"].(string); !strings.HasSuffix(id, ":emit:1") || !strings.HasPrefix(id, st0) {
		t.Errorf("event_id = %#v, want %s:emit:1", p["event_id"], st0)
	}
	if jsonText(t, p["max_steps"]) != "0" {
		t.Errorf("max_steps = %#v, want 0", p["max_steps"])
	}

	ps, _ = emitPayloads(t, map[string]any{"scope": "team", "payload": nil}, map[string]any{"name": "cfg", "sessionId": " s2 "})
	p = ps[0]
	if p["name"] != "cfg" || p["scope"] != "session" || jsonText(t, p["payload"]) != "{}" || p["session_id"] != "s2" {
		t.Errorf("config fallbacks: payload = %s, want name cfg, scope session, payload {}, session_id s2", jsonText(t, p))
	}
}
