package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// twoEntryFlow is S1 and S2 both entering end T, with extra edges and
// T's data (entryRoutes, inputRouteOverrides...).
func twoEntryFlow(data map[string]any, extra ...string) map[string]any {
	s1 := rsNode("S1", "on_flow_start", nil, []string{"exec-out:exec", "x:string"}, nil)
	s2 := rsNode("S2", "on_user_request", nil, []string{"exec-out:exec", "message:string"}, nil)
	end := rsNode("T", "on_flow_end", []string{"exec-in:exec", "m:any"}, nil, data)
	edges := append([]string{"S1.exec-out>T.exec-in", "S2.exec-out>T.exec-in"}, extra...)
	return rsFlow("f", "S1", []map[string]any{s1, s2, end}, edges...)
}

// TestDuplicateIncomingExecEdgeIsRefused pins §3.1 validation: two
// exec edges from the same source handle into one target are refused,
// even when saved entryRoutes list that source once.
func TestDuplicateIncomingExecEdgeIsRefused(t *testing.T) {
	t.Parallel()
	f := twoEntryFlow(map[string]any{"entryRoutes": []any{
		map[string]any{"sourceNodeId": "S1", "sourceHandle": "exec-out"},
		map[string]any{"sourceNodeId": "S2", "sourceHandle": "exec-out"},
	}}, "S1.exec-out>T.exec-in")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "duplicate incoming exec edge from S1.exec-out") {
		t.Fatalf("err = %v, want a duplicate incoming exec edge error", err)
	}
}

// TestDuplicateEntryRouteKeyIsRefused pins §3.1 validation: saved
// entryRoutes naming one key for two routes are refused.
func TestDuplicateEntryRouteKeyIsRefused(t *testing.T) {
	t.Parallel()
	f := twoEntryFlow(map[string]any{"entryRoutes": []any{
		map[string]any{"key": "k", "sourceNodeId": "S1", "sourceHandle": "exec-out"},
		map[string]any{"key": "k", "sourceNodeId": "S2", "sourceHandle": "exec-out"},
	}})
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), `duplicate entry route key "k"`) {
		t.Fatalf("err = %v, want a duplicate entry route key error", err)
	}
}

// joinWhich is the `which` the join in front of target recorded, as JSON.
func joinWhich(t *testing.T, st *durable.RunState, target string) string {
	t.Helper()
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs[joinPrefix+target].(map[string]any)
	return jsonText(t, rec["which"])
}

// TestEntryRoutesTakeTheSourceAlias pins §3.1 step 1: an entryRoutes
// entry names its source as sourceNodeId or under the alias source, and
// the saved order (S2 first) gives the route index, not the edge order.
func TestEntryRoutesTakeTheSourceAlias(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"sourceNodeId", "source"} {
		f := twoEntryFlow(map[string]any{"entryRoutes": []any{map[string]any{key: "S2"}, map[string]any{key: "S1"}}})
		st := runFlow(t, f, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("entryRoutes by %s: status %s (%s)", key, st.Status, st.Error)
		}
		if got := joinWhich(t, st, "T"); got != "1" {
			t.Errorf("entryRoutes by %s: join which = %s, want 1 (S1 is the second saved route)", key, got)
		}
	}
}

// TestGeneratedNodeIDCollisionsAreRefused pins §3.1 step 2: a document
// node already holding the id lowering would give the join or a path_mux
// (the reserved prefixes are allowed on nodes of those types) is a
// compile error, not silently shadowed.
func TestGeneratedNodeIDCollisionsAreRefused(t *testing.T) {
	t.Parallel()
	overrides := map[string]any{"m": map[string]any{"S1::exec-out": map[string]any{"sourceNodeId": "S1", "sourceHandle": "x"}}}
	for name, n := range map[string]map[string]any{
		"join": rsNode(joinPrefix+"T", "join_exec", []string{"exec-in:exec"}, []string{"exec-out:exec"}, nil),
		"mux":  rsNode(muxPrefix+"T__m", "path_mux", []string{"select:number"}, []string{"out:any"}, nil),
	} {
		f := twoEntryFlow(map[string]any{"inputRouteOverrides": overrides})
		f["nodes"] = append(f["nodes"].([]any), n)
		_, err := Compile(f, CompileOptions{})
		if err == nil || !strings.Contains(err.Error(), "collides with an existing node") {
			t.Errorf("%s id taken by a document node: err = %v, want a generated node id collision", name, err)
		}
	}
}

// TestRouteOverrideOfABlankPinIsDropped pins routeOverrides: an
// inputRouteOverrides entry under the blank pin id names no input, so it
// is dropped as the reference drops it, and lowering inserts no path_mux
// for it (only the join).
func TestRouteOverrideOfABlankPinIsDropped(t *testing.T) {
	t.Parallel()
	f := twoEntryFlow(map[string]any{"inputRouteOverrides": map[string]any{
		"": map[string]any{"S1::exec-out": map[string]any{"sourceNodeId": "S1", "sourceHandle": "x"}}}})
	g, err := compileGraph(f, CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	for id := range g.nodes {
		if strings.HasPrefix(id, muxPrefix) {
			t.Errorf("workflow has node %s; want no path_mux for the blank pin id", id)
		}
	}
}
