package visualflow

import "testing"

// The editor lets a boolean pin feed a string pin, and an array pin feed
// an artifacts pin (and back); a load-time check stricter than the
// editor would refuse flows the editor saves.
func TestPinTypesAcceptEditorWires(t *testing.T) {
	for _, c := range [][2]string{{"boolean", "string"}, {"number", "string"}, {"array", "artifacts"}, {"artifacts", "array"}} {
		if !pinTypesCompatible(c[0], c[1]) {
			t.Errorf("%s -> %s refused, want accepted", c[0], c[1])
		}
	}
	if pinTypesCompatible("string", "boolean") {
		t.Errorf("string -> boolean accepted, want refused")
	}
}
