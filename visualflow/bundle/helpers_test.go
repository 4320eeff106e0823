package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// makeZip builds a zip archive from name → content.
func makeZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	return zipWith(t, files, zip.Deflate)
}

// zipWith builds a zip archive from name → content, entries in name
// order, each compressed with method.
func zipWith(tb testing.TB, files map[string]string, method uint16) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// fixtureOptions configures fixtureManifest.
type fixtureOptions struct {
	ID, Version, CreatedAt string
	Flows                  []string
}

// fixtureManifest returns a valid manifest object for the given flows.
func fixtureManifest(o fixtureOptions) map[string]any {
	if o.Version == "" {
		o.Version = "1.0.0"
	}
	if len(o.Flows) == 0 {
		o.Flows = []string{"main"}
	}
	flows := map[string]any{}
	for _, f := range o.Flows {
		flows[f] = "flows/" + f + ".json"
	}
	return map[string]any{
		"bundle_format_version": "1",
		"bundle_id":             o.ID,
		"bundle_version":        o.Version,
		"created_at":            o.CreatedAt,
		"entrypoints":           []any{map[string]any{"flow_id": o.Flows[0], "name": o.ID + "-entry", "description": "", "interfaces": []any{"abstractcode.agent.v1", " "}}},
		"default_entrypoint":    o.Flows[0],
		"flows":                 flows,
		"artifacts":             map[string]any{},
		"assets":                map[string]any{},
		"metadata":              map[string]any{"lifecycle": map[string]any{"channel": "draft"}},
	}
}

// simpleFlow returns a VisualFlow with a start node (pin "prompt" with a
// default), an agent node and a subflow node calling child.
func simpleFlow(id, child string) map[string]any {
	exec := map[string]any{"id": "exec-out", "type": "execution"}
	execIn := map[string]any{"id": "exec-in", "type": "execution"}
	return map[string]any{
		"id": id, "name": id + " name", "description": "d", "interfaces": []any{"abstractcode.agent.v1"},
		"entryNode": "start",
		"nodes": []any{
			map[string]any{"id": "start", "type": "on_flow_start", "data": map[string]any{
				"outputs": []any{exec,
					map[string]any{"id": "prompt", "label": "Prompt", "type": "string"},
					map[string]any{"id": "count", "label": "count", "type": "number"},
					map[string]any{"id": "image", "label": "image", "type": "artifact_image"},
				},
				"pinDefaults": map[string]any{"prompt": "hi"},
			}},
			map[string]any{"id": "call", "type": "subflow", "data": map[string]any{
				"inputs": []any{execIn}, "outputs": []any{exec}, "subflowId": child,
			}},
			map[string]any{"id": "ext", "type": "subflow", "data": map[string]any{
				"inputs": []any{execIn}, "outputs": []any{exec}, "flowId": "other-bundle@1:x",
			}},
			map[string]any{"id": "agent-1", "type": "agent", "data": map[string]any{
				"inputs": []any{execIn}, "outputs": []any{exec},
			}},
			map[string]any{"id": "orphan", "type": "subflow", "data": map[string]any{
				"inputs": []any{execIn}, "outputs": []any{exec}, "subflowId": "does-not-exist",
			}},
		},
		"edges": []any{
			map[string]any{"source": "start", "sourceHandle": "exec-out", "target": "call", "targetHandle": "exec-in"},
			map[string]any{"source": "call", "sourceHandle": "exec-out", "target": "ext", "targetHandle": "exec-in"},
			map[string]any{"source": "ext", "sourceHandle": "exec-out", "target": "agent-1", "targetHandle": "exec-in"},
		},
	}
}

func leafFlow(id string) map[string]any {
	return map[string]any{"id": id, "nodes": []any{
		map[string]any{"id": "s", "type": "on_flow_start", "data": map[string]any{"outputs": []any{map[string]any{"id": "exec-out", "type": "execution"}}}},
	}, "edges": []any{}}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bundleZip builds a valid two-flow bundle zip (main → child).
func bundleZip(t *testing.T, o fixtureOptions) []byte {
	t.Helper()
	if len(o.Flows) == 0 {
		o.Flows = []string{"main", "child"}
	}
	files := map[string]string{"manifest.json": mustJSON(t, fixtureManifest(o))}
	for i, f := range o.Flows {
		flow := leafFlow(f)
		if i == 0 && len(o.Flows) > 1 {
			flow = simpleFlow(f, o.Flows[1])
		}
		files["flows/"+f+".json"] = mustJSON(t, flow)
	}
	return makeZip(t, files)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustJSONNoT(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// manifestWith returns fixtureManifest(o) with the given keys replaced.
func manifestWith(o fixtureOptions, set map[string]any) map[string]any {
	m := fixtureManifest(o)
	for k, v := range set {
		m[k] = v
	}
	return m
}
