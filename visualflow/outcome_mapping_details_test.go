package visualflow

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// transcribe_audio's text is str(text.content) when that is set, and only
// then raw.content: a top-level content must not replace the transcript.
func TestTranscribeTextContentWinsOverContent(t *testing.T) {
	s := &step{}
	out, _ := s.mapEffect(&node{ID: "tx", Type: "transcribe_audio"},
		map[string]any{"text": map[string]any{"content": "transcript"}, "content": "other"}, nil).(map[string]any)
	if out["text"] != "transcript" {
		t.Fatalf("text = %s, want the text.content", jsonText(t, out["text"]))
	}
}

// An llm_call's raw and ttft_ms pins exist only when a wire reads them
// (§5.3 llm_call row); a wired one must carry the outcome's value, or the
// consumer reads nothing.
func TestLLMCallWiredRawAndTimingPins(t *testing.T) {
	t.Parallel()
	raw := map[string]any{"content": "hello", "gen_time": 1.5, "ttft_ms": int64(12)}
	for pin, want := range map[string]any{"raw": raw, "ttft_ms": int64(12), "gen_time": 1.5} {
		t.Run(pin, func(t *testing.T) {
			t.Parallel()
			flow := syncFlow("llm_call", []string{"prompt:string"}, []string{"response:string", pin + ":any"},
				map[string]any{"pinDefaults": map[string]any{"prompt": "hi"},
					"effectConfig": map[string]any{"provider": "p", "model": "m"}}, pin)
			_, st := startRunHandled(t, flow, CompileOptions{}, syncResult(raw), nil)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			if normJSON(t, st.Output["got"]) != normJSON(t, want) {
				t.Fatalf("wired %s pin: output %s, want %s", pin, jsonText(t, st.Output), jsonText(t, want))
			}
		})
	}
}

// model_residency's affected_models is raw.affected_models, else
// [raw.runtime] when runtime is an object, else raw.models; models stays
// raw.models (or the affected list when there is none).
func TestResidencyAffectedModelsFromRuntimeObject(t *testing.T) {
	rt := map[string]any{"model": "m1", "loaded": true}
	out := map[string]any{}
	mapResidency(out, map[string]any{"runtime": rt, "models": []any{"m2"}}, nil)
	if !reflect.DeepEqual(out["affected_models"], []any{rt}) {
		t.Errorf("affected_models = %s, want [runtime]", jsonText(t, out["affected_models"]))
	}
	if !reflect.DeepEqual(out["models"], []any{"m2"}) {
		t.Errorf("models = %s, want raw.models", jsonText(t, out["models"]))
	}
}

// memory_kg_query copies packets_version (with the other packing fields)
// from an object outcome; a non-object outcome gets count 0 and ok false,
// not nulls, on every KG node.
func TestKGOutcomePackingVersionAndNonObjectCounts(t *testing.T) {
	s := &step{}
	out, _ := s.mapEffect(&node{ID: "q", Type: "memory_kg_query"},
		map[string]any{"items": []any{}, "packets_version": int64(2), "packets": []any{}}, nil).(map[string]any)
	if out["packets_version"] != int64(2) {
		t.Errorf("packets_version = %s, want 2", jsonText(t, out["packets_version"]))
	}
	for _, typ := range []string{"memory_kg_assert", "memory_kg_query", "memory_kg_resolve"} {
		out, _ := s.mapEffect(&node{ID: "k", Type: typ}, "not an object", nil).(map[string]any)
		if out["count"] != int64(0) || out["ok"] != false {
			t.Errorf("%s on a non-object outcome: count %s, ok %s, want 0 and false", typ, jsonText(t, out["count"]), jsonText(t, out["ok"]))
		}
	}
}

// A media outcome naming artifacts under several outputs keys picks the
// first in sorted key order, so the artifact pin does not depend on map
// iteration order.
func TestMediaFirstArtifactTakesSortedOutputsKey(t *testing.T) {
	raw := map[string]any{"outputs": map[string]any{
		"b": []any{map[string]any{"artifact_id": "B"}},
		"a": []any{map[string]any{"artifact_id": "A"}},
		"c": []any{map[string]any{"artifact_id": "C"}},
	}}
	ref, _ := firstArtifact(raw).(map[string]any)
	if ref["artifact_id"] != "A" {
		t.Fatalf("first artifact = %s, want the one under key a", jsonText(t, ref))
	}
}
