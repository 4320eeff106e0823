package visualflow

import (
	"testing"
)

// A branch node whose result carries an empty string as "branch" fails
// with the "did not return a string 'branch' value" error, as the
// reference's compiler.py _create_visual_function_handler reports it
// (`if not isinstance(branch, str) or not branch:`), not as an unknown
// branch named by the empty string.
func TestEmptyBranchStringIsAMissingBranch(t *testing.T) {
	flow := rsFlow("emptybranch", "P", []map[string]any{
		rsNode("P", "parse_json", []string{"exec-in:exec", "text:string"}, []string{"true:exec", "false:exec", "result:any"},
			map[string]any{"pinDefaults": map[string]any{"text": `{"branch": ""}`}}),
		setFlagNode("A", "a_ran"),
	}, "P.true>A.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, nil)
	out := st.Output
	want := "Branching node did not return a string 'branch' value"
	if out["success"] != false || out["error"] != want {
		t.Errorf("output = %s, want success=false error=%q", jsonText(t, out), want)
	}
	if st.Vars["_flow_error"] != want {
		t.Errorf("_flow_error = %v, want %q", st.Vars["_flow_error"], want)
	}
}
