package visualflow

import (
	"reflect"
	"testing"
)

// A model_residency outcome that is not an object is a failure whose
// error and single warning are str(outcome), as in the reference's
// output sync (a null outcome gives no warning).
func TestResidencyNonObjectOutcome(t *testing.T) {
	out := map[string]any{}
	mapResidency(out, "backend offline", nil)
	if out["success"] != false || out["error"] != "backend offline" || !reflect.DeepEqual(out["warnings"], []any{"backend offline"}) {
		t.Errorf("outcome \"backend offline\": %v", out)
	}
	out = map[string]any{}
	mapResidency(out, nil, nil)
	if !reflect.DeepEqual(out["warnings"], []any{}) {
		t.Errorf("null outcome: warnings = %#v, want []", out["warnings"])
	}
}

// An object outcome's error is str(error) when truthy, and runtime counts
// as the affected model only when it is an object.
func TestResidencyObjectOutcome(t *testing.T) {
	out := map[string]any{}
	mapResidency(out, map[string]any{"error": map[string]any{"code": "E1"}, "runtime": "r1"}, map[string]bool{"runtime": true})
	if out["success"] != false || out["error"] != "{'code': 'E1'}" {
		t.Errorf("error object: success %v, error %#v", out["success"], out["error"])
	}
	if !reflect.DeepEqual(out["affected_models"], []any{}) {
		t.Errorf("string runtime: affected_models = %#v, want []", out["affected_models"])
	}
	if _, ok := out["runtime"]; ok {
		t.Errorf("string runtime: runtime pin set to %#v, want unset", out["runtime"])
	}
}

// success is raw.success when it is a boolean, ahead of raw.ok (§5.3
// model_residency row); ok counts only when success is not a boolean.
func TestResidencySuccessBeforeOk(t *testing.T) {
	for _, c := range []struct {
		raw  map[string]any
		want bool
	}{
		{map[string]any{"success": true, "ok": false}, true},
		{map[string]any{"success": false, "ok": true}, false},
		{map[string]any{"success": "yes", "ok": false}, false},
		{map[string]any{"error": "boom"}, false},
		{map[string]any{}, true},
	} {
		out := map[string]any{}
		mapResidency(out, c.raw, nil)
		if out["success"] != c.want {
			t.Errorf("outcome %v: success = %#v, want %v", c.raw, out["success"], c.want)
		}
	}
}

// llm_call meta.output_mode is "media" only when outputs or resources hold
// a non-empty list (§5.3 llm_call row): an empty list leaves the mode to
// the data ("structured") or "unstructured".
func TestLLMOutputModeNeedsANonEmptyMediaList(t *testing.T) {
	for _, c := range []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"content": "hi", "outputs": map[string]any{"image": []any{}}}, "unstructured"},
		{map[string]any{"data": map[string]any{"a": int64(1)}, "resources": map[string]any{"audio": []any{}}}, "structured"},
		{map[string]any{"content": "hi", "outputs": map[string]any{"image": []any{map[string]any{"$artifact": "a1"}}}}, "media"},
	} {
		out := map[string]any{}
		mapLLM(out, c.raw, nil)
		meta, _ := out["meta"].(map[string]any)
		if meta["output_mode"] != c.want {
			t.Errorf("outcome %v: output_mode = %#v, want %q", c.raw, meta["output_mode"], c.want)
		}
	}
}
