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
