package bundle

import (
	"archive/zip"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// bundle_fuzz_test.go: fuzz targets for the bundle reader (zip bytes,
// manifest.json, flow JSON) and the registry.

// fuzzZip builds a zip archive from name → content, each entry stored
// (not deflated) so that the fuzzer can mutate the JSON in place.
func fuzzZip(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	return zipWith(tb, files, zip.Store)
}

const fuzzManifest = `{"bundle_format_version": "1", "bundle_id": "fz", "bundle_version": "1.0.0",
 "created_at": "2025-01-01T00:00:00Z",
 "entrypoints": [{"flow_id": "main", "name": "Main", "description": "", "interfaces": ["abstractcode.agent.v1"]}],
 "default_entrypoint": "main",
 "flows": {"main": "flows/main.json", "child": "flows/child.json"},
 "artifacts": {}, "assets": {"logo": "assets/logo.txt"}, "metadata": {"k": [1, 2.50, null, true]}}`

const fuzzMainFlow = `{"id": "main", "nodes": [{"id": "s", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
 {"id": "c", "type": "subflow", "data": {"subflowId": "child"}}],
 "edges": [{"source": "s", "sourceHandle": "exec-out", "target": "c", "targetHandle": "exec-in"}]}`

const fuzzChildFlow = `{"id": "child", "nodes": [], "edges": []}`

// sharedBundleSeeds returns the bytes of ../shared/bundles/*.flow (read
// at test time, never copied into the repository).
func sharedBundleSeeds() [][]byte {
	files, _ := filepath.Glob(filepath.Join(sharedBundlesDir, "*.flow"))
	var out [][]byte
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && len(data) < 1<<20 {
			out = append(out, data)
		}
	}
	return out
}

// errorNamesSomething reports whether a read error says what is wrong:
// it starts with "reading bundle <name>" and names the manifest, a
// manifest field, a zip entry, a flow or an asset.
func errorNamesSomething(msg, name string) bool {
	if !strings.HasPrefix(msg, "reading bundle ") || !strings.Contains(msg, name) {
		return false
	}
	for _, w := range []string{"manifest", "bundle_format_version", "zip entry", "zip archive", ": flow ", ": asset ", "larger than"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// checkLoaded asserts the invariants of a bundle that read without error,
// then writes it and reads it back: what was read must survive the round
// trip unchanged.
func checkLoaded(t *testing.T, b *Bundle) {
	t.Helper()
	m := b.Manifest
	if err := m.Validate(); err != nil {
		t.Fatalf("a bundle that read has an invalid manifest: %v", err)
	}
	for id := range m.Flows {
		flow, ok := b.Flows[id]
		if !ok {
			t.Fatalf("manifest flow %q was not loaded", id)
		}
		again, err := DecodeFlow(b.FlowBytes[id])
		if err != nil || !reflect.DeepEqual(again, flow) {
			t.Fatalf("flow %q: FlowBytes decode to %v (err %v), not to Flows[%q]", id, again, err, id)
		}
	}
	if len(b.Flows) != len(m.Flows) || len(b.FlowBytes) != len(m.Flows) {
		t.Fatalf("%d flows, %d flow texts for %d manifest flows", len(b.Flows), len(b.FlowBytes), len(m.Flows))
	}
	for a := range b.Assets {
		if _, ok := m.Assets[a]; !ok {
			t.Fatalf("asset %q loaded but not in the manifest", a)
		}
	}
	checkNamespace(t, b)
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		msg := err.Error()
		// Documented refusals: a flow or asset stored at manifest.json (two
		// entries of one name), a path shared with different content, and
		// metadata nested deeper than the stores write.
		if strings.Contains(msg, "is the manifest's") || strings.Contains(msg, "with different content") ||
			strings.Contains(msg, "nested") {
			return
		}
		t.Fatalf("a bundle that read does not write: %v", err)
	}
	back, err := ReadBytes(buf.Bytes(), "again.flow")
	if err != nil {
		t.Fatalf("a written bundle does not read back: %v", err)
	}
	bm := back.Manifest
	if bm.BundleFormatVersion != m.BundleFormatVersion || bm.BundleID != m.BundleID || bm.BundleVersion != m.BundleVersion ||
		bm.CreatedAt != m.CreatedAt || bm.DefaultEntrypoint != m.DefaultEntrypoint {
		t.Fatalf("manifest header changed by write/read:\n was %+v\n now %+v", m, bm)
	}
	if !reflect.DeepEqual(bm.Entrypoints, m.Entrypoints) {
		t.Fatalf("entrypoints changed by write/read:\n was %#v\n now %#v", m.Entrypoints, bm.Entrypoints)
	}
	if !reflect.DeepEqual(bm.Metadata, m.Metadata) {
		t.Fatalf("metadata changed by write/read:\n was %#v\n now %#v", m.Metadata, bm.Metadata)
	}
	for _, pair := range [][2]map[string]string{{m.Flows, bm.Flows}, {m.Assets, bm.Assets}, {m.Artifacts, bm.Artifacts}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("path map changed by write/read: %v → %v", pair[0], pair[1])
		}
		for k, p := range pair[0] {
			if q, ok := pair[1][k]; !ok || normPath(pyval.Strip(p)) != normPath(q) {
				t.Fatalf("path of %q changed by write/read: %q → %q", k, p, q)
			}
		}
	}
	if !reflect.DeepEqual(back.Flows, b.Flows) {
		t.Fatalf("flows changed by write/read")
	}
	for id, data := range b.FlowBytes {
		if !bytes.Equal(back.FlowBytes[id], data) {
			t.Fatalf("flow %q bytes changed by write/read", id)
		}
	}
	if !reflect.DeepEqual(back.Assets, b.Assets) {
		t.Fatalf("assets changed by write/read: %v → %v", b.Assets, back.Assets)
	}
}

// FuzzReadBundleZip: any bytes either read as a bundle, with a valid
// manifest, every manifest flow decoded (its text decoding to the same
// object) and a write/read round trip that changes nothing, or fail with an
// error that names the bundle and what is wrong in it. Seeds: the shared
// example bundles and small hand-made ones.
func FuzzReadBundleZip(f *testing.F) {
	for _, s := range sharedBundleSeeds() {
		f.Add(s)
	}
	f.Add(fuzzZip(f, map[string]string{"manifest.json": fuzzManifest, "flows/main.json": fuzzMainFlow,
		"flows/child.json": fuzzChildFlow, "assets/logo.txt": "hi"}))
	f.Add(fuzzZip(f, map[string]string{"manifest.json": fuzzManifest, "flows/main.json": fuzzMainFlow}))
	f.Add(fuzzZip(f, map[string]string{"manifest.json": `{}`}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte("not a zip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// No hang: a read and its round trip end within seconds (a panic
		// in the timer's goroutine makes the fuzzer keep the input).
		slow := time.AfterFunc(20*time.Second, func() {
			panic(fmt.Sprintf("reading a %d-byte bundle took more than 20s", len(data)))
		})
		defer slow.Stop()
		b, err := ReadBytes(data, "fuzz.flow")
		if err != nil {
			if !errorNamesSomething(err.Error(), "fuzz.flow") {
				t.Fatalf("error does not say what is wrong: %q", err)
			}
			return
		}
		checkLoaded(t, b)
	})
}

// FuzzReadBundleParts builds a zip from a fuzzed manifest, a fuzzed flow
// entry (name and text) and a valid flow, so that the fuzzer works on the
// JSON rather than on zip structure. Properties: as FuzzReadBundleZip; and
// an error about a flow names the flow id and its path.
func FuzzReadBundleParts(f *testing.F) {
	f.Add(fuzzManifest, "flows/child.json", fuzzChildFlow)
	f.Add(fuzzManifest, "flows/child.json", `{"id": "child"} x`)
	f.Add(fuzzManifest, "flows/child.json", "\ufeff{}")
	f.Add(fuzzManifest, "flows/child.json", `[1]`)
	f.Add(fuzzManifest, "flows\\child.json", `{"a": NaN, "b": -Infinity, "c": 1e999}`)
	f.Add(fuzzManifest, "flows//child.json\x00x", fuzzChildFlow)
	f.Add(strings.Replace(fuzzManifest, `"flows/child.json"`, `" flows/child.json "`, 1), "flows/child.json", fuzzChildFlow)
	f.Add(strings.Replace(fuzzManifest, `"flows/child.json"`, `"flows/main.json"`, 1), "x/y", "")
	f.Add(strings.Replace(fuzzManifest, `"flows/child.json"`, `"manifest.json"`, 1), "x/y", "")
	f.Add(strings.Replace(fuzzManifest, `"1.0.0"`, `1.10`, 1), "flows/child.json", fuzzChildFlow)
	f.Add(`{"bundleFormatVersion": 1, "bundleId": "b", "entrypoints": [{"flowId": "child"}], "flows": {"child": "flows/child.json"}}`, "flows/child.json", fuzzChildFlow)
	f.Add(`{"bundle_format_version": "1", "bundle_id": "b", "entrypoints": [{"flow_id": "child"}], "flows": {"child": "../child.json"}}`, "flows/child.json", fuzzChildFlow)
	f.Fuzz(func(t *testing.T, manifest, name, flow string) {
		files := map[string]string{"manifest.json": manifest, "flows/main.json": fuzzMainFlow}
		if name != "" && name != "manifest.json" && name != "flows/main.json" {
			files[name] = flow
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range slices.Sorted(maps.Keys(files)) {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
			if err != nil {
				return
			}
			if _, err := w.Write([]byte(files[n])); err != nil {
				return // a directory name ("x/") with content: no such zip
			}
		}
		if err := zw.Close(); err != nil {
			return
		}
		b, err := ReadBytes(buf.Bytes(), "fuzz.flow")
		if err != nil {
			msg := err.Error()
			if !errorNamesSomething(msg, "fuzz.flow") {
				t.Fatalf("error does not say what is wrong: %q", msg)
			}
			if _, rest, ok := strings.Cut(msg, ": flow "); ok && !strings.Contains(rest, "(") {
				t.Fatalf("flow error does not name the flow's path: %q", msg)
			}
			return
		}
		checkLoaded(t, b)
	})
}

// FuzzParseManifest: a manifest text either parses into a manifest that
// validates and whose canonical text (manifestJSON, as Write writes it)
// parses back to an equal manifest and re-encodes to the same bytes, or
// fails with an error naming the manifest or the field.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(fuzzManifest))
	f.Add([]byte(`{"bundle_format_version": "1", "bundle_id": " b ", "bundle_version": " ", "entrypoints": [{"flow_id": " m ", "name": null, "interfaces": [" a ", ""]}], "flows": {"m": " flows/m.json "}}`))
	f.Add([]byte(`{"bundleFormatVersion": 1.0, "bundleId": 12, "bundleVersion": 1e2, "createdAt": 3, "entrypoints": [{"flowId": 7}], "flows": {"7": "f.json"}, "metadata": {"x": NaN, "y": "\u00e9\ud83d\ude00"}}`))
	f.Add([]byte(`{"bundle_format_version": "1", "bundle_id": "b", "entrypoints": [{"flow_id": "m"}], "flows": {"m": "C:/x"}}`))
	f.Add([]byte(`{"bundle_format_version": "1", "bundle_id": "b", "entrypoints": [], "flows": {}}`))
	f.Add([]byte(`{"bundle_format_version": "2"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte("\ufeff{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "manifest") && !strings.Contains(msg, "bundle_format_version") {
				t.Fatalf("error names neither the manifest nor a field: %q", msg)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("a parsed manifest does not validate: %v", err)
		}
		text, err := manifestJSON(m)
		if err != nil {
			if strings.Contains(err.Error(), "nested") {
				return // metadata deeper than the stores write: refused, naming its path
			}
			t.Fatalf("a parsed manifest does not encode: %v", err)
		}
		m2, err := ParseManifest(text)
		if err != nil {
			t.Fatalf("the canonical text of a parsed manifest does not parse: %v\n%s", err, text)
		}
		if !reflect.DeepEqual(m2, m) {
			t.Fatalf("manifest changed by its canonical text:\n was %#v\n now %#v\n text %s", m, m2, text)
		}
		text2, err := manifestJSON(m2)
		if err != nil || !bytes.Equal(text2, text) {
			t.Fatalf("canonical text not stable (err %v):\n%s\n%s", err, text, text2)
		}
	})
}

// FuzzRegistryBadBundleIsolated: a registry directory holding a valid
// bundle (a_good.flow) and a fuzzed file (z_fuzz.flow). Whatever the fuzzed
// file holds, the good bundle still loads and resolves (by ref, by id, by
// file name, by entrypoint name when unambiguous); a failure of the fuzzed
// file is returned naming it. A fuzzed reference either resolves to a
// loaded bundle and one of its entrypoints or fails with an error.
func FuzzRegistryBadBundleIsolated(f *testing.F) {
	good := fuzzZip(f, map[string]string{"manifest.json": fuzzManifest, "flows/main.json": fuzzMainFlow,
		"flows/child.json": fuzzChildFlow})
	f.Add(good, "fz@1.0.0:main", "")
	f.Add(good, "Main", "")
	f.Add([]byte("junk"), "z_fuzz.flow", "")
	f.Add(fuzzZip(f, map[string]string{"manifest.json": strings.ReplaceAll(fuzzManifest, `"1.0.0"`, `"2.0.0"`),
		"flows/main.json": fuzzMainFlow, "flows/child.json": fuzzChildFlow}), "fz", "child")
	f.Add(fuzzZip(f, map[string]string{"manifest.json": strings.ReplaceAll(fuzzManifest, `"fz"`, `"other"`),
		"flows/main.json": fuzzMainFlow, "flows/child.json": fuzzChildFlow}), "main", "main")
	f.Add(fuzzZip(f, map[string]string{"manifest.json": strings.ReplaceAll(fuzzManifest, `"1.0.0"`, `"draft.1"`),
		"flows/main.json": fuzzMainFlow, "flows/child.json": fuzzChildFlow}), " fz @ draft.1 : main ", "main")
	for _, s := range sharedBundleSeeds() {
		f.Add(s, "basic", "")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, ref, flowID string) {
		if err := os.WriteFile(filepath.Join(dir, "a_good.flow"), good, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "z_fuzz.flow"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		reg, errs := OpenRegistry(dir, nil)
		for _, err := range errs {
			if !strings.Contains(err.Error(), "z_fuzz.flow") {
				t.Fatalf("registry error does not name the bad file: %v", err)
			}
		}
		fuzzOK := len(errs) == 0
		list := reg.List()
		if want := 1 + btoi(fuzzOK); len(list) != want {
			t.Fatalf("%d bundles listed, want %d (errors %v)", len(list), want, errs)
		}
		b, err := reg.Resolve("fz@1.0.0")
		if err != nil || filepath.Base(b.Source) != "a_good.flow" {
			t.Fatalf("good bundle no longer resolves by ref: %v", err)
		}
		if b, fl, err := reg.ResolveEntrypoint("a_good.flow", ""); err != nil || fl != "main" || filepath.Base(b.Source) != "a_good.flow" {
			t.Fatalf("good bundle no longer resolves by file name: %v %q", err, fl)
		}
		if _, fl, err := reg.ResolveEntrypoint("fz@1.0.0:child", ""); err == nil || fl != "" {
			// child is no entrypoint of the good bundle
			t.Fatalf("a flow that is no entrypoint resolved: %q %v", fl, err)
		}
		if !fuzzOK {
			if b, err := reg.Resolve("fz"); err != nil || b.Ref() != "fz@1.0.0" {
				t.Fatalf("good bundle no longer resolves by id: %v", err)
			}
		}
		b, fl, err := reg.ResolveEntrypoint(ref, flowID)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if !slices.Contains(list, b) {
			t.Fatalf("ResolveEntrypoint(%q, %q) gave a bundle not in the registry: %s", ref, flowID, b.Ref())
		}
		if _, ok := b.Manifest.Entrypoint(fl); !ok {
			t.Fatalf("ResolveEntrypoint(%q, %q) gave %q, not an entrypoint of %s", ref, flowID, fl, b.Ref())
		}
		if _, ok := b.Flows[fl]; !ok {
			t.Fatalf("ResolveEntrypoint(%q, %q) gave %q, a flow not loaded", ref, flowID, fl)
		}
		if flowID != "" && fl != flowID {
			t.Fatalf("ResolveEntrypoint(%q, %q) gave flow %q, not the one asked for", ref, flowID, fl)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkNamespace asserts that Namespace gives one flow per manifest flow,
// under its namespaced id, with each subflow reference naming a flow of
// the bundle rewritten to its namespaced id and others kept, and leaves
// the bundle's own flows unchanged.
func checkNamespace(t *testing.T, b *Bundle) {
	t.Helper()
	m := b.Manifest
	ns, err := Namespace(b)
	if err != nil {
		t.Fatalf("namespacing a bundle that read: %v", err)
	}
	if len(ns) != len(m.Flows) {
		t.Fatalf("%d namespaced flows for %d manifest flows", len(ns), len(m.Flows))
	}
	for id := range m.Flows {
		nsID := WorkflowID(m.BundleID, m.BundleVersion, id)
		flow, ok := ns[nsID]
		if !ok || flow["id"] != nsID {
			t.Fatalf("flow %q: no namespaced flow %q", id, nsID)
		}
		orig, err := DecodeFlow(b.FlowBytes[id])
		if err != nil || !reflect.DeepEqual(orig, b.Flows[id]) {
			t.Fatalf("flow %q changed by Namespace", id)
		}
		before, after := nodeList(orig), nodeList(flow)
		if len(before) != len(after) {
			t.Fatalf("flow %q: %d nodes before namespacing, %d after", id, len(before), len(after))
		}
		for i, n := range before {
			if NodeType(n) != "subflow" {
				continue
			}
			d, _ := n["data"].(map[string]any)
			d2, _ := after[i]["data"].(map[string]any)
			for _, k := range subflowRefKeys {
				s, ok := d[k].(string)
				if !ok {
					continue
				}
				want := s
				if ref := pyval.Strip(s); ref != "" {
					if _, in := m.Flows[ref]; in {
						want = WorkflowID(m.BundleID, m.BundleVersion, ref)
					}
				}
				if d2[k] != want {
					t.Fatalf("flow %q node %d: %s %q namespaced to %v, want %q", id, i, k, s, d2[k], want)
				}
			}
		}
	}
}
