package visualflow

import (
	"strings"
	"testing"
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
