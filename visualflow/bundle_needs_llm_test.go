package visualflow

import (
	"fmt"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// needsLLMFlow returns a flow "id" that starts each of subs as a subflow in
// turn, then, when llm, runs an llm_call node.
func needsLLMFlow(t *testing.T, id string, llm bool, subs ...string) map[string]any {
	t.Helper()
	nodes := `{"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}}`
	edges, prev := "", "s"
	for i, sub := range subs {
		n := fmt.Sprintf("sub%d", i)
		nodes += fmt.Sprintf(`,{"id":%q,"type":"subflow","data":{"subflowId":%q,"inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"}]}}`, n, sub)
		edges += fmt.Sprintf(`{"source":%q,"sourceHandle":"exec-out","target":%q,"targetHandle":"exec-in"},`, prev, n)
		prev = n
	}
	if llm {
		nodes += `,{"id":"llm","type":"llm_call","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],
		 "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"hi","provider":"p","model":"m"}}}`
		edges += fmt.Sprintf(`{"source":%q,"sourceHandle":"exec-out","target":"llm","targetHandle":"exec-in"},`, prev)
	}
	if edges != "" {
		edges = edges[:len(edges)-1]
	}
	return mustFlow(t, fmt.Sprintf(`{"id":%q,"nodes":[%s],"edges":[%s]}`, id, nodes, edges))
}

// FlowInfo.NeedsLLM tells a host whether running the flow needs an LLM
// handler, so it looks through the subflows the flow starts, at any depth,
// and terminates on subflow cycles. Effects stays the flow's own.
func TestCompileBundleNeedsLLMThroughSubflows(t *testing.T) {
	t.Parallel()
	flows := map[string]map[string]any{
		"top":    needsLLMFlow(t, "top", false, "mid"),  // top -> mid -> leaf (llm)
		"mid":    needsLLMFlow(t, "mid", false, "leaf"), //
		"leaf":   needsLLMFlow(t, "leaf", true),
		"cycleA": needsLLMFlow(t, "cycleA", false, "cycleB"), // cycleA <-> cycleB, no llm
		"cycleB": needsLLMFlow(t, "cycleB", false, "cycleA"),
		"loopy":  needsLLMFlow(t, "loopy", false, "loopy", "top"), // self cycle, reaches llm
	}
	paths := map[string]string{}
	for id := range flows {
		paths[id] = "flows/" + id + ".json"
	}
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "1",
			Entrypoints: []bundle.Entrypoint{{FlowID: "top"}}, Flows: paths},
		Flows: flows,
	}
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"top": true, "mid": true, "leaf": true, "cycleA": false, "cycleB": false, "loopy": true}
	for id, w := range want {
		fi, ok := cb.Flow(id)
		if !ok {
			t.Fatalf("flow %s missing", id)
		}
		if fi.NeedsLLM != w {
			t.Errorf("flow %s: NeedsLLM = %v, want %v", id, fi.NeedsLLM, w)
		}
	}
	if top, _ := cb.Flow("top"); slices.Contains(top.Effects, "llm_call") {
		t.Errorf("flow top: Effects = %v, want only its own nodes' effects (no llm_call)", top.Effects)
	}
}
