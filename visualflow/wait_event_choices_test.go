package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestWaitEventEmptyChoicesListIsKept: the reference's
// wait_event builder (visual/executor.py _create_wait_event_handler) keeps
// a `choices` pin that is a list as a list, even when no entry survives
// the non-blank filter: `if isinstance(choices, list): pending["choices"] =
// choices`, so the effect payload carries "choices": [] and the runtime's
// _handle_wait_event stores WaitState.choices = [] (a list, not None).
// Spec §6.1 (wait_event): "choices (list → non-blank strings only)".
// Here an all-blank or empty choices list is dropped from the payload, so
// the stored wait says choices: null where Python stores [].
func TestWaitEventEmptyChoicesListIsKept(t *testing.T) {
	t.Parallel()
	for _, choices := range [][]any{{}, {"  ", int64(3)}} {
		flow := rsFlow("we", "start", []map[string]any{
			rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
			rsNode("wait", "wait_event", []string{"exec-in:exec", "event_key:string", "choices:array"},
				[]string{"exec-out:exec", "event_data:any"}, map[string]any{"pinDefaults": map[string]any{
					"event_key": "k", "choices": choices}}),
		}, "start.exec-out>wait.exec-in")
		rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
		}
		recs, err := rt.GetLedger(context.Background(), st.RunID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range recs {
			if r.Effect == nil || r.Effect.Type != durable.EffectWaitEvent {
				continue
			}
			found = true
			got, ok := r.Effect.Payload["choices"].([]any)
			if !ok || len(got) != 0 {
				t.Errorf("choices pin %v: effect payload choices = %#v (present %v), want [] as in the reference", choices, r.Effect.Payload["choices"], ok)
			}
		}
		if !found {
			t.Fatal("no wait_event effect in the ledger")
		}
		if st.Waiting.Choices == nil {
			t.Errorf("choices pin %v: stored wait choices = nil (null), want [] as Python's WaitState.choices", choices)
		}
	}
}

// Prompts and levels are judged blank with Python's strip(), which also
// removes U+001C–U+001F: a wait_event prompt of "\x1f" is no prompt, and
// an answer_user level "warning\x1f" is a warning.
func TestEffectPayloadTextStrippedAsPython(t *testing.T) {
	if got := answerLevel("WARNING\x1f"); got != "warning" {
		t.Errorf("answerLevel(%q) = %q, want warning", "WARNING\x1f", got)
	}
	flow := rsFlow("wep", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("wait", "wait_event", []string{"exec-in:exec", "event_key:string", "prompt:string"},
			[]string{"exec-out:exec", "event_data:any"}, map[string]any{"pinDefaults": map[string]any{
				"event_key": "k", "prompt": "\x1f"}}),
	}, "start.exec-out>wait.exec-in")
	rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting {
		t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
	}
	recs, err := rt.GetLedger(context.Background(), st.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectWaitEvent {
			if p, has := r.Effect.Payload["prompt"]; has {
				t.Errorf("wait_event payload prompt = %q, want none (blank after Python's strip)", p)
			}
		}
	}
}
