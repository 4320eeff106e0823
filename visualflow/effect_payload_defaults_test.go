package visualflow

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// wait_event without an event_key pin waits on the key "default" (§6
// wait_event row); an empty key would leave the wait unreachable.
func TestWaitEventPayloadDefaultKey(t *testing.T) {
	if p := waitEventPayload(map[string]any{}); p["wait_key"] != "default" {
		t.Fatalf("wait_key = %s, want \"default\"", jsonText(t, p["wait_key"]))
	}
}

// listen_voice reads the STT provider and model from the voice pins'
// aliases (provider_voice, model_voice) too, as transcribe_audio does.
func TestListenVoiceVoicePinAliases(t *testing.T) {
	p := listenVoicePayload(map[string]any{"provider_voice": " pv ", "model_voice": "mv"}, map[string]any{})
	d, _ := p["details"].(map[string]any)
	if d["provider"] != "pv" || d["model"] != "mv" {
		t.Fatalf("details = %s, want provider pv and model mv", jsonText(t, d))
	}
}

// model_residency's operation is str(value or "list_loaded").strip(): a
// whitespace-only operation is truthy, strips to "", and must still send
// list_loaded rather than an empty operation.
func TestModelResidencyBlankOperationIsListLoaded(t *testing.T) {
	if p := modelResidencyPayload(map[string]any{"operation": "   "}, map[string]any{}); p["operation"] != "list_loaded" {
		t.Fatalf("operation = %s, want list_loaded", jsonText(t, p["operation"]))
	}
}

// A wait_until delay that lands before year 1 fails as Python's datetime
// + timedelta does (OverflowError), for a moderate negative delay (the
// year check) and for one too large to count in days (the magnitude
// check); a small negative delay is just a time in the past.
func TestWaitUntilNegativeDelayBeforeYearOneFails(t *testing.T) {
	for _, secs := range []float64{-1e11, -1e300} {
		if got, err := addSeconds(fixedClock, secs); err == nil {
			t.Errorf("addSeconds(%g) = %s, want date value out of range", secs, got.Format(time.RFC3339))
		}
	}
	if got, err := addSeconds(fixedClock, -3600); err != nil || !got.Equal(fixedClock.Add(-time.Hour)) {
		t.Errorf("addSeconds(-3600) = %s, %v; want an hour earlier", got.Format(time.RFC3339), err)
	}
}

// The scalar bus stands for an effect node's main pin only when nothing
// resolved (§4.2 step 4): with a pin default resolved, ask_user is built
// from its pins (default prompt, the choices) and the bus is not used.
func TestEffectScalarBusUnusedWhenAPinResolves(t *testing.T) {
	st := runFlowOnce(t, scalarBusFlow("'Your name?'", `{"id": "n", "type": "ask_user", "data": {
	  "pinDefaults": {"choices": ["a", "b"]},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "prompt", "type": "string"}, {"id": "choices", "type": "array"}],
	  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "response", "type": "string"}]}}`, ``, ``), map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
	}
	if st.Waiting.Prompt != "Please respond:" || normJSON(t, st.Waiting.Choices) != `["a","b"]` {
		t.Fatalf("ask_user prompt %q, choices %s; want the default prompt and the pin's choices", st.Waiting.Prompt, jsonText(t, st.Waiting.Choices))
	}
}
