package bundle

import (
	"archive/zip"
	"bytes"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Spec §8.3: "for every subflow node, each of subflowId, flowId,
// workflowId, workflow_id whose trimmed string value equals a flow_id of
// the same bundle manifest is replaced by that flow's namespaced id";
// already-namespaced ids are left as-is.
func TestSpec83_NamespaceRewritesEverySubflowAliasKey(t *testing.T) {
	main := leafFlow("main")
	main["nodes"] = append(main["nodes"].([]any), map[string]any{"id": "call", "type": "subflow", "data": map[string]any{
		"workflowId": "child", "workflow_id": " child ", "flowId": "demo@dev:child", "subflowId": "main",
	}})
	files := map[string]string{
		"manifest.json":    mustJSON(t, fixtureManifest(fixtureOptions{ID: "demo", Version: "dev", Flows: []string{"main", "child"}})),
		"flows/main.json":  mustJSON(t, main),
		"flows/child.json": mustJSON(t, leafFlow("child")),
	}
	b, err := ReadBytes(makeZip(t, files), "demo.flow")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := Namespace(b)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	for _, n := range nodeList(ns["demo@dev:main"]) {
		if nodeID(n) == "call" {
			data = nodeData(n)
		}
	}
	want := map[string]any{"workflowId": "demo@dev:child", "workflow_id": "demo@dev:child", "flowId": "demo@dev:child", "subflowId": "demo@dev:main"}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data.%s = %#v, want %q", k, data[k], v)
		}
	}
}

// Spec §8.5: "Entrypoint: explicit flow_id (must be an entrypoint), else
// default_entrypoint, else the first entrypoint (runtime registry)".
func TestSpec85_EntrypointWithoutDefaultIsTheFirst(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "multi", Flows: []string{"first", "second"}}, map[string]any{
		"entrypoints": []any{
			map[string]any{"flow_id": "second", "name": "Second"},
			map[string]any{"flow_id": "first", "name": "First"},
		},
	})
	delete(m, "default_entrypoint")
	r := registryOf(t, map[string][]byte{"multi.flow": zipOfManifest(t, m, "first", "second")})
	b, flow, err := r.ResolveEntrypoint("multi", "")
	if err != nil || b.Ref() != "multi@1.0.0" || flow != "second" {
		t.Fatalf("ResolveEntrypoint(multi) = %v, %q, %v; want the first entrypoint second", b, flow, err)
	}
}

// Spec §7.3: "any missing id (or a subflow node without id) aborts
// packing".
func TestSpec73_PackSubflowNodeWithoutIDAborts(t *testing.T) {
	root := packFlow("root", "")
	dir := packDir(t, map[string]map[string]any{"root": root})
	_, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err == nil || !strings.Contains(err.Error(), "call") {
		t.Fatalf("Pack of a reachable subflow node without id: err = %v, want an error naming node call", err)
	}
}

// Spec §7.3: an entrypoint's name is the flow's name or its id, its
// interfaces are the flow's with blanks dropped (§1.1), and the manifest
// written has empty artifacts and assets objects.
func TestSpec73_PackEntrypointNameFallbackAndEmptyMaps(t *testing.T) {
	root := leafFlow("root")
	root["interfaces"] = []any{" abstractcode.agent.v1 ", "", "  "}
	dir := packDir(t, map[string]map[string]any{"root": root})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep := b.Manifest.Entrypoints[0]
	if ep.Name != "root" || ep.Description != "" || !reflect.DeepEqual(ep.Interfaces, []string{"abstractcode.agent.v1"}) {
		t.Fatalf("entrypoint = %+v, want name root, description \"\", interfaces [abstractcode.agent.v1]", ep)
	}
	text := writtenManifest(t, b)
	for _, want := range []string{`"artifacts": {}`, `"assets": {}`, `"flows": {`, `"root": "flows/root.json"`} {
		if !strings.Contains(text, want) {
			t.Errorf("manifest.json lacks %s:\n%s", want, text)
		}
	}
}

// Spec §7.2: default_entrypoint is "omitted from the written manifest
// when null".
func TestSpec72_WrittenManifestOmitsMissingDefaultEntrypoint(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "nodef"})
	delete(m, "default_entrypoint")
	b, err := ReadBytes(zipOfManifest(t, m, "main"), "nodef.flow")
	if err != nil {
		t.Fatal(err)
	}
	if text := writtenManifest(t, b); strings.Contains(text, "default_entrypoint") {
		t.Fatalf("manifest.json names default_entrypoint:\n%s", text)
	}
}

// writtenManifest writes b and returns the text of its manifest.json.
func writtenManifest(t *testing.T, b *Bundle) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name != "manifest.json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	t.Fatal("no manifest.json in the written bundle")
	return ""
}

// Spec §8.2: "Ids are split on the first ':'; the prefix is split on the
// first '@'", so a version holding '@' stays whole.
func TestSpec82_PrefixSplitsOnFirstAt(t *testing.T) {
	b, v, f, ok := SplitWorkflowID("b@1@2:f")
	if !ok || b != "b" || v != "1@2" || f != "f" {
		t.Fatalf("SplitWorkflowID(b@1@2:f) = %q %q %q %v; want b, 1@2, f", b, v, f, ok)
	}
}
