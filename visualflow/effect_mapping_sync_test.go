package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// These tests pin the effect outcome → pin mapping (spec §5.3) to the
// reference's _sync_effect_results_to_node_outputs where the two read a
// field with Python truthiness (`a or b`) or a type check.

// syncFlow is start → fx (type typ) → end, with end's input pin "got"
// wired from fx.<pin>.
func syncFlow(typ string, fxIn, fxOut []string, fxData map[string]any, pin string) map[string]any {
	return rsFlow("vfsync", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("fx", typ, append([]string{"exec-in:exec"}, fxIn...), append([]string{"exec-out:exec"}, fxOut...), fxData),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "got:any"}, nil, nil),
	}, "start.exec-out>fx.exec-in", "fx.exec-out>end.exec-in", "fx."+pin+">end.got")
}

// syncResult answers LLM and tool effects with r.
func syncResult(r any) map[durable.EffectType]runtime.Handler {
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(r), nil
	}}
	return map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: h, durable.EffectToolCalls: h}
}

// A host resuming listen_voice with an artifact id text keeps that text on
// the audio_artifact pin and at outputKey: Python merges the payload and
// replaces audio_artifact/artifact_ref only with an object taken from
// `raw.audio_artifact or raw.artifact or raw.artifact_ref`.
func TestListenVoiceKeepsNonObjectAudioArtifact(t *testing.T) {
	t.Parallel()
	flow := syncFlow("listen_voice", []string{"prompt:string"}, []string{"audio_artifact:object", "text:string"},
		map[string]any{"outputKey": "saved"}, "audio_artifact")
	rt, st := startRunWith(t, flow, CompileOptions{}, nil)
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s, want waiting on listen_voice", st.Status)
	}
	st, err := rt.Resume(context.Background(), runtime.ResumeParams{RunID: st.RunID, WaitKey: st.Waiting.WaitKey,
		Payload: map[string]any{"audio_artifact": "art-1", "text": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := st.Output["got"]; got != "art-1" {
		t.Errorf("audio_artifact pin: output %s, want \"art-1\"", jsonText(t, st.Output))
	}
	if got := st.Vars["saved"]; got != "art-1" {
		t.Errorf("vars.saved (outputKey) = %s, want \"art-1\"", jsonText(t, got))
	}
}

// listen_voice's ref look-up is Python's `or` chain (an empty object is
// skipped, a truthy non-object stops it), and artifact_id is replaced only
// by a non-blank `$artifact or artifact_id` of the ref.
func TestListenVoiceArtifactLookup(t *testing.T) {
	t.Parallel()
	ref := map[string]any{"$artifact": " a-1 ", "artifact_id": "other"}
	cases := []struct {
		name    string
		raw     map[string]any
		wantRef any // audio_artifact
		wantAR  any // artifact_ref
		wantID  any
	}{
		{"empty object skipped", map[string]any{"audio_artifact": map[string]any{}, "artifact": ref}, ref, ref, "a-1"},
		{"text stops the chain", map[string]any{"audio_artifact": "x", "artifact": ref}, "x", nil, nil},
		{"blank id keeps merged", map[string]any{"artifact_id": "keep", "artifact": map[string]any{"artifact_id": " "}},
			map[string]any{"artifact_id": " "}, map[string]any{"artifact_id": " "}, "keep"},
		{"id from artifact_id", map[string]any{"artifact": map[string]any{"artifact_id": "b", "id": "c"}},
			map[string]any{"artifact_id": "b", "id": "c"}, map[string]any{"artifact_id": "b", "id": "c"}, "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := (&step{}).mapEffect(&node{ID: "lv", Type: "listen_voice"}, tc.raw, nil).(map[string]any)
			if jsonText(t, out["audio_artifact"]) != jsonText(t, tc.wantRef) {
				t.Errorf("audio_artifact = %s, want %s", jsonText(t, out["audio_artifact"]), jsonText(t, tc.wantRef))
			}
			if jsonText(t, out["artifact_ref"]) != jsonText(t, tc.wantAR) {
				t.Errorf("artifact_ref = %s, want %s", jsonText(t, out["artifact_ref"]), jsonText(t, tc.wantAR))
			}
			if out["artifact_id"] != tc.wantID {
				t.Errorf("artifact_id = %s, want %s", jsonText(t, out["artifact_id"]), jsonText(t, tc.wantID))
			}
		})
	}
}

// A media generation that names no artifact has a null mapped value
// (Python: artifact_ref or artifact_id, both None), so outputKey is not
// written and the var keeps its value.
func TestMediaWithoutArtifactLeavesOutputKey(t *testing.T) {
	t.Parallel()
	flow := syncFlow("generate_image", []string{"prompt:string"}, []string{"image_artifact:object", "success:boolean"},
		map[string]any{"outputKey": "saved", "pinDefaults": map[string]any{"prompt": "a cat"}}, "success")
	_, st := startRunHandled(t, flow, CompileOptions{}, syncResult(map[string]any{"outputs": map[string]any{}}), map[string]any{"saved": "previous"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := st.Vars["saved"]; got != "previous" {
		t.Fatalf("vars.saved = %s, want \"previous\"", jsonText(t, got))
	}
}

// call_tool's failure text is Python's `error or "Tool execution failed"`
// (an empty error gets the default), and a first result that is not an
// object is "Missing tool result".
func TestCallToolFailureText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"empty error", map[string]any{"mode": "executed", "results": []any{map[string]any{"success": false, "error": "", "output": nil}}}, "Tool execution failed"},
		{"error text", map[string]any{"mode": "executed", "results": []any{map[string]any{"success": false, "error": "boom"}}}, "boom"},
		{"null result", map[string]any{"mode": "executed", "results": []any{nil}}, "Missing tool result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			flow := syncFlow("call_tool", []string{"tool_call:object"}, []string{"result:any", "success:boolean"},
				map[string]any{"pinDefaults": map[string]any{"tool_call": map[string]any{"name": "t", "arguments": map[string]any{}}}}, "result")
			_, st := startRunHandled(t, flow, CompileOptions{}, syncResult(tc.raw), nil)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			if got := st.Output["got"]; got != tc.want {
				t.Fatalf("call_tool result pin: output %s, want %q", jsonText(t, st.Output), tc.want)
			}
		})
	}
}

// llm_call meta keeps provider/model/finish_reason only as non-blank texts
// (trimmed), usage only as an object, timings unless boolean, and takes the
// trace id from raw.metadata.trace_id when raw.trace_id is blank.
func TestLLMMetaSkipsBlankFields(t *testing.T) {
	t.Parallel()
	flow := syncFlow("llm_call", []string{"prompt:string"}, []string{"response:string", "meta:object"},
		map[string]any{"pinDefaults": map[string]any{"prompt": "hi"},
			"effectConfig": map[string]any{"provider": "p", "model": "m"}}, "meta")
	_, st := startRunHandled(t, flow, CompileOptions{}, syncResult(map[string]any{
		"content": "hello", "provider": "", "model": " m1 ", "finish_reason": 3, "usage": "n/a",
		"gen_time": true, "ttft_ms": int64(12), "trace_id": "", "metadata": map[string]any{"trace_id": "t-1"},
	}), nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	meta, _ := st.Output["got"].(map[string]any)
	if meta == nil {
		t.Fatalf("no meta in output %s", jsonText(t, st.Output))
	}
	for _, k := range []string{"provider", "finish_reason", "usage", "gen_time"} {
		if v, has := meta[k]; has {
			t.Errorf("meta.%s = %s, want it left out", k, jsonText(t, v))
		}
	}
	if meta["model"] != "m1" {
		t.Errorf("meta.model = %s, want \"m1\"", jsonText(t, meta["model"]))
	}
	if jsonText(t, meta["ttft_ms"]) != "12" {
		t.Errorf("meta.ttft_ms = %s, want 12", jsonText(t, meta["ttft_ms"]))
	}
	tr, _ := meta["trace"].(map[string]any)
	if tr["trace_id"] != "t-1" {
		t.Errorf("meta.trace = %s, want {\"trace_id\": \"t-1\"}", jsonText(t, meta["trace"]))
	}
}
