package visualflow

import (
	"slices"
	"testing"
)

// TestJoinWarnsWhenSeveralRoutesShareTheSourceAndHandleIsMissing pins
// the join_exec fallback (§6.12): when the previous node feeds several
// routes and no handle was recorded, the first of them is taken and a
// #FALLBACK warning says so.
func TestJoinWarnsWhenSeveralRoutesShareTheSourceAndHandleIsMissing(t *testing.T) {
	t.Parallel()
	join := joinPrefix + "T"
	f := rsFlow("f", join, []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": true}),
		rvEnd("T", nil, nil)},
		"start.exec-out>if.exec-in", "if.true>T.exec-in", "if.false>T.exec-in")
	vars := map[string]any{"_temp": map[string]any{"prev_node_id": "if"}}
	_, st := startRunWith(t, f, CompileOptions{}, vars)
	want := "#FALLBACK join_exec '" + join + "': multiple incoming routes from 'if' but prev_exec_handle was missing; defaulting which=0."
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if !slices.Contains(warnings, any(want)) {
		t.Fatalf("_flow_warnings = %v, want %q", warnings, want)
	}
}
