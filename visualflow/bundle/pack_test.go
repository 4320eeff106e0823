package bundle

import (
	"path/filepath"
	"testing"
)

// packDir writes flows (id → flow) as <id>.json in a fresh directory.
func packDir(t *testing.T, flows map[string]map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	for id, f := range flows {
		writeFile(t, filepath.Join(dir, id+".json"), []byte(mustJSON(t, f)))
	}
	return dir
}

func flowKeys(b *Bundle) []string {
	var out []string
	for id := range b.Manifest.Flows {
		out = append(out, id)
	}
	return out
}

// §7.3: every on_event node is a root of the reachability walk, so a
// subflow reached only from an event handler is packed.
func TestPackCollectsSubflowReachedFromOnEvent(t *testing.T) {
	root := packFlow("root", "child")
	exec := map[string]any{"id": "exec-out", "type": "execution"}
	execIn := map[string]any{"id": "exec-in", "type": "execution"}
	root["nodes"] = append(root["nodes"].([]any),
		map[string]any{"id": "ev", "type": "on_event", "data": map[string]any{"outputs": []any{exec}}},
		map[string]any{"id": "evcall", "type": "subflow", "data": map[string]any{
			"inputs": []any{execIn}, "outputs": []any{exec}, "subflowId": "handler"}},
	)
	root["edges"] = append(root["edges"].([]any),
		map[string]any{"source": "ev", "sourceHandle": "exec-out", "target": "evcall", "targetHandle": "exec-in"})
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child"), "handler": leafFlow("handler")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Manifest.Flows["handler"]; !ok {
		t.Fatalf("packed flows = %v; want handler (reached from an on_event node)", flowKeys(b))
	}
}

// §7.3: with neither the root nor the default given among the
// entrypoints, default_entrypoint is the first entrypoint.
func TestPackDefaultEntrypointIsFirstWhenRootIsNotAnEntrypoint(t *testing.T) {
	dir := packDir(t, map[string]map[string]any{
		"root": packFlow("root", "child"), "child": packFlow("child", "grand"), "grand": leafFlow("grand"),
	})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{Entrypoints: []string{"grand", "child"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.DefaultEntrypoint != "grand" {
		t.Fatalf("default_entrypoint = %q, want the first entrypoint grand", b.Manifest.DefaultEntrypoint)
	}
}

// §7.3: reachability follows exec edges only; a data edge into a subflow
// node does not make it reachable (here its child does not exist).
func TestPackIgnoresDataEdgesForReachability(t *testing.T) {
	root := packFlow("root", "child")
	root["edges"] = append(root["edges"].([]any),
		map[string]any{"source": "start", "sourceHandle": "prompt", "target": "orphan", "targetHandle": "prompt"})
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatalf("Pack with a data edge into an unreachable subflow node: %v", err)
	}
	if len(b.Manifest.Flows) != 2 {
		t.Fatalf("packed flows = %v, want root and child", flowKeys(b))
	}
}

// §7.3: the entryNode, when it is an exec node, is the root, even when
// another exec node without incoming edge comes first in the node list.
func TestPackStartsFromEntryNode(t *testing.T) {
	root := packFlow("root", "child")
	nodes := root["nodes"].([]any)
	var orphan any
	var rest []any
	for _, n := range nodes {
		if n.(map[string]any)["id"] == "orphan" {
			orphan = n
		} else {
			rest = append(rest, n)
		}
	}
	root["nodes"] = append([]any{orphan}, rest...)
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatalf("Pack: %v (the orphan subflow node listed first is not reachable from entryNode start)", err)
	}
	if _, ok := b.Manifest.Flows["child"]; !ok {
		t.Fatalf("packed flows = %v; want child (reached from entryNode)", flowKeys(b))
	}
}

// §7.3: a subflow node naming its child with the legacy flowId key is
// followed too.
func TestPackFollowsFlowIdAlias(t *testing.T) {
	root := packFlow("root", "child")
	for _, n := range root["nodes"].([]any) {
		node := n.(map[string]any)
		if node["id"] == "call" {
			data := node["data"].(map[string]any)
			delete(data, "subflowId")
			data["flowId"] = "child"
		}
	}
	dir := packDir(t, map[string]map[string]any{"root": root, "child": leafFlow("child")})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Manifest.Flows["child"]; !ok {
		t.Fatalf("packed flows = %v; want child (named by flowId)", flowKeys(b))
	}
}
