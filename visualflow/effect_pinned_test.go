package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestAskUserDefaultPrompt pins the ask_user catalogue entry: with no
// prompt input the payload's prompt is "Please respond:".
func TestAskUserDefaultPrompt(t *testing.T) {
	t.Parallel()
	flow := rsFlow("ask_default", "start", []map[string]any{rvStart(),
		rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"}, nil),
		rvEnd("end", nil, nil)},
		"start.exec-out>ask.exec-in", "ask.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting.Prompt != "Please respond:" {
		t.Fatalf("status %s, waiting %+v; want a wait with prompt %q", st.Status, st.Waiting, "Please respond:")
	}
}

// TestWaitUntilPastYear9999Fails pins that a wait_until whose deadline
// falls after year 9999 (within the ten-thousand-year bound) fails the run
// with "date value out of range", as Python's datetime + timedelta raises.
func TestWaitUntilPastYear9999Fails(t *testing.T) {
	t.Parallel()
	flow := rsFlow("wait_until_9999", "start", []map[string]any{rvStart(),
		rsNode("wait", "wait_until", []string{"exec-in:exec", "duration:number"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"duration": int64(8000 * 365 * 24)}, "effectConfig": map[string]any{"durationType": "hours"}}),
		rvEnd("end", nil, nil)},
		"start.exec-out>wait.exec-in", "wait.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "date value out of range") {
		t.Fatalf("status %s, error %q; want failed with date value out of range", st.Status, st.Error)
	}
}

// TestWaitEventAllowFreeTextAlias pins that wait_event reads the
// allowFreeText alias when allow_free_text is absent.
func TestWaitEventAllowFreeTextAlias(t *testing.T) {
	t.Parallel()
	flow := rsFlow("wait_alias", "start", []map[string]any{rvStart(),
		rsNode("w", "wait_event", []string{"exec-in:exec", "event_key:string", "allowFreeText:boolean"}, []string{"exec-out:exec", "event_data:any"},
			map[string]any{"pinDefaults": map[string]any{"event_key": "k", "allowFreeText": false}}),
		rvEnd("end", nil, nil)},
		"start.exec-out>w.exec-in", "w.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting.AllowFreeText {
		t.Fatalf("status %s, waiting %+v; want a wait with allow_free_text false", st.Status, st.Waiting)
	}
}

// TestModelResidencyDropsNaNTimeout pins that a NaN timeout_s is left
// out of the model_residency payload, like any unreadable number.
func TestModelResidencyDropsNaNTimeout(t *testing.T) {
	t.Parallel()
	flow := rsFlow("residency_nan", "start", []map[string]any{rvStart(),
		rsNode("m", "model_residency", []string{"exec-in:exec", "timeout_s:any"}, []string{"exec-out:exec", "success:boolean"},
			map[string]any{"pinDefaults": map[string]any{"timeout_s": "nan"}}),
		rvEnd("end", nil, nil)},
		"start.exec-out>m.exec-in", "m.exec-out>end.exec-in")
	sc := &scripted{results: []any{map[string]any{"success": true}}}
	startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectModelResidency: sc.handler()}, map[string]any{})
	if len(sc.payloads) != 1 {
		t.Fatalf("payloads = %v, want one model_residency effect", sc.payloads)
	}
	if v, ok := sc.payloads[0]["timeout_s"]; ok {
		t.Fatalf("timeout_s = %v, want it left out", v)
	}
}

// TestModelResidencyOkAliasIsSuccess pins the model_residency mapping:
// without a boolean success, a boolean ok in the outcome is the success pin.
func TestModelResidencyOkAliasIsSuccess(t *testing.T) {
	t.Parallel()
	flow := rsFlow("residency_ok", "start", []map[string]any{rvStart(),
		rsNode("m", "model_residency", []string{"exec-in:exec"}, []string{"exec-out:exec", "success:boolean"}, nil),
		rvEnd("end", []string{"ok"}, nil)},
		"start.exec-out>m.exec-in", "m.exec-out>end.exec-in", "m.success>end.ok")
	sc := &scripted{results: []any{map[string]any{"ok": false}}}
	_, st := startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectModelResidency: sc.handler()}, map[string]any{})
	if st.Output["ok"] != false {
		t.Fatalf("output %s, want ok=false from the outcome's ok", jsonText(t, st.Output))
	}
}

// TestEffectRecordDropsPendingEffectMarker pins §5.3: an effect node's
// pins are its stored outcome merged over its record, less the
// _pending_effect marker a Python runtime leaves in the record.
func TestEffectRecordDropsPendingEffectMarker(t *testing.T) {
	t.Parallel()
	ask := map[string]any{"id": "ask", "type": "ask_user", "data": map[string]any{}}
	flow := rsFlow("pending", "start", []map[string]any{rvStart(), ask, rvEnd("end", []string{"rec"}, nil)},
		"start.exec-out>end.exec-in", "ask.output>end.rec")
	vars := map[string]any{"_temp": map[string]any{
		"node_outputs": map[string]any{"ask": map[string]any{"_pending_effect": map[string]any{"type": "ask_user"}, "response": "old"}},
		"effects":      map[string]any{"ask": map[string]any{"response": "new"}},
	}}
	st := runFlow(t, flow, vars)
	if got := jsonText(t, st.Output["rec"]); got != jsonText(t, map[string]any{"response": "new"}) {
		t.Fatalf("rec = %s, want {response: new}", got)
	}
}

// TestLLMCallResultPinIsTheRawOutcome pins §5.3: a wired result pin of
// llm_call reads the whole raw outcome.
func TestLLMCallResultPinIsTheRawOutcome(t *testing.T) {
	t.Parallel()
	llm := rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:provider", "model:model"},
		[]string{"exec-out:exec", "response:string", "result:object"},
		map[string]any{"pinDefaults": map[string]any{"prompt": "p", "provider": "prov", "model": "mod"}})
	flow := rsFlow("llm_result", "start", []map[string]any{rvStart(), llm, rvEnd("end", []string{"res"}, nil)},
		"start.exec-out>llm.exec-in", "llm.exec-out>end.exec-in", "llm.result>end.res")
	raw := map[string]any{"content": "hi", "extra": "kept"}
	sc := &scripted{results: []any{raw}}
	_, st := startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, map[string]any{})
	if got := jsonText(t, st.Output["res"]); got != jsonText(t, raw) {
		t.Fatalf("res = %s, want the raw outcome %s (status %s %s)", got, jsonText(t, raw), st.Status, st.Error)
	}
}
