package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// mediaLoopFlow runs the media node M (type typ) twice in a for loop, then
// ends with end.<pin> wired from M.<pin> for each pin: the end reads M's
// pins as its second run left them.
func mediaLoopFlow(typ string, defaults map[string]any, pins ...string) map[string]any {
	endIn := []string{"exec-in:exec"}
	mOut := []string{"exec-out:exec"}
	edges := []string{"S.exec-out>F.exec-in", "F.loop>M.exec-in", "F.done>E.exec-in"}
	for _, p := range pins {
		endIn = append(endIn, p+":any")
		mOut = append(mOut, p+":any")
		edges = append(edges, "M."+p+">E."+p)
	}
	return rsFlow("medialoop", "S", []map[string]any{
		rsNode("S", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("F", "for", []string{"exec-in:exec", "start:number", "end:number"}, []string{"loop:exec", "done:exec"},
			map[string]any{"pinDefaults": map[string]any{"start": int64(0), "end": int64(2)}}),
		rsNode("M", typ, []string{"exec-in:exec"}, mOut, map[string]any{"pinDefaults": defaults}),
		rsNode("E", "on_flow_end", endIn, nil, nil),
	}, edges...)
}

// The reference's media handlers (visual/executor.py) replace the node's
// record before each run with {<primary>: None, artifact_ref: None,
// artifact_id: "", success: None} (music: audio_artifact too), and the
// outcome mapping (compiler.py _sync_effect_results_to_node_outputs) only
// sets the artifact pins when the outcome names an artifact. So a second
// run that produces none leaves artifact_id "" and the artifact pins null;
// nothing of the first run (its content_type included) is kept.
func TestMediaRerunWithoutArtifactShowsPlaceholders(t *testing.T) {
	first := map[string]any{"artifact_ref": map[string]any{"$artifact": "a1", "content_type": "audio/wav"}}
	pins := []string{"artifact_id", "artifact_ref", "music_artifact", "audio_artifact", "content_type", "success"}
	llm := &scripted{results: []any{first, map[string]any{"outputs": map[string]any{}}}}
	_, st := startRunHandled(t, mediaLoopFlow("generate_music", map[string]any{"prompt": "jazz"}, pins...), CompileOptions{},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if len(llm.results) != 0 {
		t.Fatalf("%d scripted outcomes left, want the node run twice", len(llm.results))
	}
	want := map[string]any{"artifact_id": "", "artifact_ref": nil, "music_artifact": nil, "audio_artifact": nil, "success": false}
	for k, v := range want {
		if got, ok := st.Output[k]; !ok || jsonText(t, got) != jsonText(t, v) {
			t.Errorf("%s = %s (present %v), want %s", k, jsonText(t, got), ok, jsonText(t, v))
		}
	}
	if v, ok := st.Output["content_type"]; ok && v != nil {
		t.Errorf("content_type = %s, want the first run's value not kept", jsonText(t, v))
	}
}

// transcribe_audio's placeholder record is {text: "", transcript_artifact:
// None, success: None}: it has no artifact_id or artifact_ref, and the
// mapping sets them only from an artifact. A run whose outcome names no
// artifact leaves those pins absent (a wire from them reads nothing), not
// "" or null.
func TestTranscribeWithoutArtifactLeavesArtifactPinsAbsent(t *testing.T) {
	n := &node{ID: "tx", Type: "transcribe_audio"}
	s := &step{}
	out, _ := s.mapEffect(n, map[string]any{"text": map[string]any{"content": "hi"}}, nil).(map[string]any)
	for _, k := range []string{"artifact_id", "artifact_ref"} {
		if v, has := out[k]; has {
			t.Errorf("%s = %s, want the pin absent", k, jsonText(t, v))
		}
	}
	if out["transcript_artifact"] != nil || out["text"] != "hi" || out["success"] != true {
		t.Errorf("record = %s", jsonText(t, out))
	}
	out, _ = s.mapEffect(n, map[string]any{"artifact_id": " t1 "}, nil).(map[string]any)
	ref := map[string]any{"$artifact": "t1", "artifact_id": "t1"}
	if out["artifact_id"] != "t1" || jsonText(t, out["artifact_ref"]) != jsonText(t, ref) || jsonText(t, out["transcript_artifact"]) != jsonText(t, ref) {
		t.Errorf("record with an artifact = %s", jsonText(t, out))
	}

	// In a flow, the second (artifact-less) run's artifact_id is not read.
	llm := &scripted{results: []any{map[string]any{"artifact_id": "t1", "content": "one"}, map[string]any{"content": "two"}}}
	_, st := startRunHandled(t, mediaLoopFlow("transcribe_audio", map[string]any{"audio_artifact": "a1"}, "artifact_id", "text"),
		CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if st.Output["text"] != "two" {
		t.Fatalf("text = %s, want the second run's", jsonText(t, st.Output["text"]))
	}
	if v := st.Output["artifact_id"]; v != nil {
		t.Errorf("artifact_id = %s, want nothing read from the absent pin", jsonText(t, v))
	}
}

// An outcome that is not an object maps nothing (the reference's
// `if isinstance(raw, dict)`): the record is the placeholder record, and
// there is no mapped value for an outputKey.
func TestMediaNonObjectOutcomeKeepsPlaceholders(t *testing.T) {
	s := &step{}
	img, _ := s.mapEffect(&node{ID: "g", Type: "generate_image"}, "oops", nil).(map[string]any)
	wantImg := map[string]any{"image_artifact": nil, "artifact_ref": nil, "artifact_id": "", "success": nil}
	if jsonText(t, img) != jsonText(t, wantImg) {
		t.Errorf("generate_image record = %s, want %s", jsonText(t, img), jsonText(t, wantImg))
	}
	tx := &node{ID: "t", Type: "transcribe_audio"}
	rec, _ := s.mapEffect(tx, []any{"x"}, nil).(map[string]any)
	wantTx := map[string]any{"text": "", "transcript_artifact": nil, "success": nil}
	if jsonText(t, rec) != jsonText(t, wantTx) {
		t.Errorf("transcribe_audio record = %s, want %s", jsonText(t, rec), jsonText(t, wantTx))
	}
	if v := mappedValue(tx, rec, []any{"x"}); v != nil {
		t.Errorf("transcribe_audio mapped value = %s, want none", jsonText(t, v))
	}
}
