package bundle

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadBytes_RoundTrip(t *testing.T) {
	t.Parallel()
	data := bundleZip(t, fixtureOptions{ID: "demo", Version: "1.2.0"})
	b, err := ReadBytes(data, "demo@1.2.0.flow")
	if err != nil {
		t.Fatal(err)
	}
	if b.Ref() != "demo@1.2.0" || len(b.Flows) != 2 || FlowID(b.Flows["main"]) != "main" {
		t.Fatalf("bundle = %+v", b.Manifest)
	}
	b.Assets["logo"] = []byte("PNG")
	b.Manifest.Assets = map[string]string{"logo": "assets/logo.png"}

	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	again, err := ReadBytes(buf.Bytes(), "copy.flow")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Manifest, b.Manifest) {
		t.Fatalf("manifest changed:\n%+v\n%+v", again.Manifest, b.Manifest)
	}
	if !reflect.DeepEqual(again.Flows, b.Flows) || string(again.Assets["logo"]) != "PNG" {
		t.Fatal("flows or assets changed in round trip")
	}

	// The same layout as a directory.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "dirb", Flows: []string{"main"}}))))
	writeFile(t, filepath.Join(dir, "flows", "main.json"), []byte(mustJSON(t, leafFlow("main"))))
	db, err := Read(dir)
	if err != nil || db.Ref() != "dirb@1.0.0" {
		t.Fatalf("Read(dir) = %v, %v", db, err)
	}

	// WriteFile then Read from disk.
	path := filepath.Join(t.TempDir(), "out.flow")
	if err := WriteFile(path, b); err != nil {
		t.Fatal(err)
	}
	if fb, err := Read(path); err != nil || fb.Ref() != "demo@1.2.0" {
		t.Fatalf("Read(file) = %v, %v", fb, err)
	}
}

func TestRead_Errors(t *testing.T) {
	t.Parallel()
	good := mustJSON(t, fixtureManifest(fixtureOptions{ID: "bad", Flows: []string{"main"}}))
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no manifest", map[string]string{"flows/main.json": "{}"}, "bad.flow: manifest.json is missing"},
		{"invalid manifest", map[string]string{"manifest.json": `{"bundle_format_version":"9"}`}, "bad.flow: unsupported bundle_format_version"},
		{"missing flow file", map[string]string{"manifest.json": good}, "bad@1.0.0 (bad.flow): flow main (flows/main.json)"},
		{"flow not object", map[string]string{"manifest.json": good, "flows/main.json": "[]"}, "flow main (flows/main.json): flow JSON must be an object"},
		{"flow invalid json", map[string]string{"manifest.json": good, "flows/main.json": "{"}, "invalid flow JSON"},
		{"escaping entry", map[string]string{"manifest.json": good, "flows/main.json": "{}", "../evil": "x"}, "unsafe zip entry"},
		{"absolute entry", map[string]string{"manifest.json": good, "flows/main.json": "{}", "/evil": "x"}, "unsafe zip entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadBytes(makeZip(t, tt.files), "bad.flow")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
	if _, err := ReadBytes([]byte("not a zip"), "junk.flow"); err == nil || !strings.Contains(err.Error(), "junk.flow") {
		t.Fatalf("non-zip err = %v", err)
	}
}

func TestReadDir_RefusesSymlinkEscape(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.json"), []byte(mustJSON(t, leafFlow("main"))))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "x", Flows: []string{"main"}}))))
	if err := os.MkdirAll(filepath.Join(dir, "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "flows", "main.json")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "escapes the bundle directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestWrite_Invalid(t *testing.T) {
	t.Parallel()
	b := &Bundle{Manifest: Manifest{BundleFormatVersion: "1", BundleID: "x", BundleVersion: "1"}}
	if err := Write(&bytes.Buffer{}, b); err == nil || !strings.Contains(err.Error(), "writing bundle x@1") {
		t.Fatalf("err = %v", err)
	}
}

func TestWorkflowIDs(t *testing.T) {
	t.Parallel()
	if got := WorkflowID("basic-agent", "0.0.1", "81795ea9"); got != "basic-agent@0.0.1:81795ea9" {
		t.Fatalf("WorkflowID = %q", got)
	}
	tests := []struct {
		id                string
		bundle, ver, flow string
		ok                bool
	}{
		{"basic-agent@0.0.1:81795ea9", "basic-agent", "0.0.1", "81795ea9", true},
		{"b:f", "b", "", "f", true},
		{"b@v:f:g", "b", "v", "f:g", true},
		{"plain", "", "", "", false},
		{":f", "", "", "", false},
		{"b:", "", "", "", false},
	}
	for _, tt := range tests {
		b, v, f, ok := SplitWorkflowID(tt.id)
		if b != tt.bundle || v != tt.ver || f != tt.flow || ok != tt.ok {
			t.Errorf("SplitWorkflowID(%q) = %q %q %q %v", tt.id, b, v, f, ok)
		}
	}
	sanitize := map[string]string{"basic-agent@0.0.1:81795ea9": "basic-agent_0_0_1_81795ea9", "": "unknown", "a b..c": "a_b_c", "ok_-1": "ok_-1"}
	for in, want := range sanitize {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ReactWorkflowID("b@1:f", "node-3"); got != "visual_react_agent_b_1_f_node-3" {
		t.Errorf("ReactWorkflowID = %q", got)
	}
}

func TestNamespace(t *testing.T) {
	t.Parallel()
	b, err := ReadBytes(bundleZip(t, fixtureOptions{ID: "demo", Version: "dev"}), "demo.flow")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := Namespace(b)
	if err != nil {
		t.Fatal(err)
	}
	main := ns["demo@dev:main"]
	if main == nil || main["id"] != "demo@dev:main" || ns["demo@dev:child"]["id"] != "demo@dev:child" {
		t.Fatalf("namespaced keys = %v", slices.Sorted(maps.Keys(ns)))
	}
	nodes := map[string]map[string]any{}
	for _, n := range nodeList(main) {
		nodes[nodeID(n)] = nodeData(n)
	}
	if got := nodes["call"]["subflowId"]; got != "demo@dev:child" {
		t.Errorf("subflowId = %v", got)
	}
	if got := nodes["ext"]["flowId"]; got != "other-bundle@1:x" {
		t.Errorf("foreign flowId rewritten: %v", got)
	}
	if got := nodes["orphan"]["subflowId"]; got != "does-not-exist" {
		t.Errorf("unknown subflowId rewritten: %v", got)
	}
	cfg, _ := nodes["agent-1"]["agentConfig"].(map[string]any)
	if cfg["_react_workflow_id"] != "visual_react_agent_demo_dev_main_agent-1" {
		t.Errorf("react id = %v", cfg["_react_workflow_id"])
	}
	if b.Flows["main"]["id"] != "main" {
		t.Error("Namespace mutated the bundle")
	}
}

// SplitWorkflowID: an id whose bundle part is empty is not namespaced.
func TestSplitWorkflowIDRefusesEmptyBundleID(t *testing.T) {
	for _, id := range []string{"@1.0:flow", "@:flow"} {
		if b, v, f, ok := SplitWorkflowID(id); ok {
			t.Errorf("SplitWorkflowID(%q) = %q, %q, %q, true; want ok=false", id, b, v, f)
		}
	}
}

func TestPack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := packFlow("root", "child")
	writeFile(t, filepath.Join(dir, "root.json"), []byte(mustJSON(t, root)))
	child := packFlow("child", "root") // self-cycle back to root is fine
	writeFile(t, filepath.Join(dir, "child.json"), []byte(mustJSON(t, child)))
	now := func() time.Time { return time.Date(2026, 2, 3, 4, 5, 6, 7000, time.UTC) }

	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if m.BundleID != "root" || m.BundleVersion != "0.0.0" || m.DefaultEntrypoint != "root" || m.CreatedAt != "2026-02-03T04:05:06.000007+00:00" {
		t.Fatalf("manifest = %+v", m)
	}
	if !reflect.DeepEqual(m.Flows, map[string]string{"root": "flows/root.json", "child": "flows/child.json"}) {
		t.Fatalf("flows = %v", m.Flows)
	}
	ep := m.Entrypoints[0]
	if ep.Name != "root name" || ep.Description != "d" || !reflect.DeepEqual(ep.Interfaces, []string{"abstractcode.agent.v1"}) {
		t.Fatalf("entrypoint = %+v", ep)
	}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBytes(buf.Bytes(), "packed.flow"); err != nil {
		t.Fatal(err)
	}

	opts := PackOptions{BundleID: "x", BundleVersion: "2.0.0", Entrypoints: []string{"child", "root"}, Now: now}
	if b, err := Pack(filepath.Join(dir, "root.json"), dir, opts); err != nil || b.Manifest.DefaultEntrypoint != "root" {
		t.Fatalf("Pack with entrypoints = %v, %v", b, err)
	}
	if _, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{DefaultEntrypoint: "child"}); err == nil {
		t.Fatal("default entrypoint outside entrypoints: no error")
	}

	// A reachable reference to a missing flow aborts packing.
	missing := packFlow("lonely", "ghost")
	writeFile(t, filepath.Join(dir, "lonely.json"), []byte(mustJSON(t, missing)))
	if _, err := Pack(filepath.Join(dir, "lonely.json"), dir, PackOptions{}); err == nil || !strings.Contains(err.Error(), "subflow ghost") {
		t.Fatalf("missing subflow err = %v", err)
	}
}

func TestInputSchema(t *testing.T) {
	t.Parallel()
	flow := simpleFlow("main", "child")
	start := flow["nodes"].([]any)[0].(map[string]any)["data"].(map[string]any)
	outs := start["outputs"].([]any)
	start["outputs"] = append(outs, map[string]any{"id": "files", "label": "files", "type": "artifacts_audio",
		"schema": map[string]any{"description": "clips"}})
	got := InputSchema(flow)
	if got["version"] != int64(1) {
		t.Fatalf("version = %v", got["version"])
	}
	inputs := got["inputs"].([]any)
	if len(inputs) != 4 {
		t.Fatalf("inputs = %v", inputs)
	}
	prompt := inputs[0].(map[string]any)
	wantPrompt := map[string]any{"id": "prompt", "label": "Prompt", "type": "string", "required": false, "default": "hi",
		"schema": map[string]any{"type": "string", "x-abstract-type": "string", "title": "Prompt", "default": "hi"}}
	if !reflect.DeepEqual(prompt, wantPrompt) {
		t.Fatalf("prompt pin = %#v", prompt)
	}
	count := inputs[1].(map[string]any)
	if count["required"] != true || count["schema"].(map[string]any)["type"] != "number" {
		t.Fatalf("count pin = %#v", count)
	}
	img := inputs[2].(map[string]any)["schema"].(map[string]any)
	if img["type"] != "object" || img["x-abstract-artifact-modality"] != "image" {
		t.Fatalf("artifact schema = %#v", img)
	}
	files := inputs[3].(map[string]any)["schema"].(map[string]any)
	if files["type"] != "array" || files["description"] != "clips" || files["items"].(map[string]any)["x-abstract-artifact-modality"] != "audio" {
		t.Fatalf("artifacts schema = %#v", files)
	}
	data := got["input_data_schema"].(map[string]any)
	if !reflect.DeepEqual(data["required"], []any{"count", "image", "files"}) || data["additionalProperties"] != true {
		t.Fatalf("input_data_schema = %#v", data)
	}
	if !reflect.DeepEqual(got["defaults"], map[string]any{"prompt": "hi"}) {
		t.Fatalf("defaults = %#v", got["defaults"])
	}
	empty := InputSchema(map[string]any{"nodes": []any{}})
	if _, has := empty["input_data_schema"].(map[string]any)["required"]; has || len(empty["inputs"].([]any)) != 0 {
		t.Fatalf("empty schema = %#v", empty)
	}
}

// packFlow is simpleFlow without the foreign-bundle subflow node, whose
// reference cannot be packed.
func packFlow(id, child string) map[string]any {
	f := simpleFlow(id, child)
	var nodes []any
	for _, n := range f["nodes"].([]any) {
		if n.(map[string]any)["id"] != "ext" {
			nodes = append(nodes, n)
		}
	}
	f["nodes"] = nodes
	f["edges"] = []any{
		map[string]any{"source": "start", "sourceHandle": "exec-out", "target": "call", "targetHandle": "exec-in"},
		map[string]any{"source": "call", "sourceHandle": "exec-out", "target": "agent-1", "targetHandle": "exec-in"},
	}
	return f
}

// Only the artifact types gateway-api §2.4 lists (artifact, artifacts and
// their _image/_audio/_text/_video forms) get an artifact-ref schema; any
// other suffix is an unknown type, as in Python.
func TestUnknownArtifactTypesAreUnknown(t *testing.T) {
	for _, typ := range []string{"artifact_document", "artifacts_pdf", "artifact_", "artifact_images"} {
		s := pinSchema(typ)
		if len(s) != 1 || s["x-abstract-type"] != typ {
			t.Errorf("pinSchema(%q) = %v, want only {x-abstract-type: %q}", typ, s, typ)
		}
	}
	if s := pinSchema("Artifact_Image"); s["x-abstract-artifact-modality"] != "image" || s["type"] != "object" {
		t.Errorf("pinSchema(Artifact_Image) = %v", s)
	}
	if s := pinSchema("artifacts_video"); s["x-abstract-artifact-modality"] != "video" || s["type"] != "array" {
		t.Errorf("pinSchema(artifacts_video) = %v", s)
	}
}
