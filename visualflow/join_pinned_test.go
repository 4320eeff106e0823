package visualflow

import (
	"slices"
	"strings"
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

// TestJoinDoesNotWarnWhenOneRouteComesFromThePreviousNode pins the other
// side of the fallback (§6.12): with prev_exec_handle missing but a single
// route from the previous node, that route is taken without a #FALLBACK
// warning, as the reference warns only on an ambiguous match. A join
// warning whenever the handle is missing (count > 0) would break this.
func TestJoinDoesNotWarnWhenOneRouteComesFromThePreviousNode(t *testing.T) {
	t.Parallel()
	join := joinPrefix + "T"
	f := rsFlow("f", join, []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": true}),
		setVarNode("E", "v", map[string]any{"value": int64(1)}), rvEnd("T", nil, nil)},
		"start.exec-out>if.exec-in", "if.true>T.exec-in", "if.false>E.exec-in", "E.exec-out>T.exec-in")
	vars := map[string]any{"_temp": map[string]any{"prev_node_id": "E"}}
	_, st := startRunWith(t, f, CompileOptions{}, vars)
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	for _, w := range warnings {
		if s, _ := w.(string); strings.HasPrefix(s, "#FALLBACK join_exec") {
			t.Fatalf("_flow_warnings = %v, want no join fallback warning", st.Vars["_flow_warnings"])
		}
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs[join].(map[string]any)
	if jsonText(t, rec["which"]) != "1" || rec["from"] != "E" {
		t.Fatalf("join record = %s, want which 1 from E", jsonText(t, rec))
	}
}

// TestJoinWithoutPreviousNodeTakesTheFirstRoute pins the other fallback
// (§6.12): a join entered with no prev_node_id (a run started at it) takes
// route 0 and warns so. Defaulting to another route (the last) would
// break this.
func TestJoinWithoutPreviousNodeTakesTheFirstRoute(t *testing.T) {
	t.Parallel()
	join := joinPrefix + "T"
	f := rsFlow("f", join, []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": true}),
		setVarNode("E", "v", map[string]any{"value": int64(1)}), rvEnd("T", nil, nil)},
		"start.exec-out>if.exec-in", "if.true>T.exec-in", "if.false>E.exec-in", "E.exec-out>T.exec-in")
	_, st := startRunWith(t, f, CompileOptions{}, map[string]any{})
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs[join].(map[string]any)
	if jsonText(t, rec["which"]) != "0" || rec["from"] != "if" || rec["from_handle"] != "true" {
		t.Fatalf("join record = %s, want which 0 from if.true", jsonText(t, rec))
	}
	want := "#FALLBACK join_exec '" + join + "': prev_node_id missing; defaulting which=0."
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if !slices.Contains(warnings, any(want)) {
		t.Fatalf("_flow_warnings = %v, want %q", warnings, want)
	}
}
