package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// A bare bundle id resolves to the bundle's default entrypoint (§8.5;
// Python's resolve_entrypoint: resolve_bundle succeeds, then
// default_entrypoint, else the first). ResolveEntrypoint instead looks the
// reference up as an entrypoint name too and, when one entrypoint of the
// same bundle is named like the bundle id, picks it over the default.
func TestBundleIDRefUsesDefaultNotSameNamedEntrypoint(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "multi", Flows: []string{"first", "second"}}, map[string]any{
		"entrypoints": []any{
			map[string]any{"flow_id": "first", "name": "Multi"},
			map[string]any{"flow_id": "second", "name": "Second"},
		},
		"default_entrypoint": "second",
	})
	r := registryOf(t, map[string][]byte{"multi.flow": zipOfManifest(t, m, "first", "second")})
	b, flow, err := r.ResolveEntrypoint("multi", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(multi): %v", err)
	}
	if b.Ref() != "multi@1.0.0" || flow != "second" {
		t.Fatalf("ResolveEntrypoint(multi) = %s, %q; want multi@1.0.0 and its default entrypoint second (the entrypoint named \"Multi\" took over the bundle id)", b.Ref(), flow)
	}
}

// Write names each zip entry normPath(manifest path) but keeps the
// manifest path as given: a path such as `flows\main.json` or
// `flows//main.json` (accepted by ParseManifest and by this package's own
// reader, which normalises both sides) gives an archive whose manifest
// names a file the archive does not hold under that name. Python's reader
// does zf.read(<manifest path>) verbatim, so it cannot load the flow.
func TestWrittenEntryNamesMatchManifestPaths(t *testing.T) {
	for _, p := range []string{`flows\main.json`, "flows//main.json"} {
		b := &Bundle{
			Manifest: Manifest{BundleFormatVersion: "1", BundleID: "x", BundleVersion: "1",
				Entrypoints: []Entrypoint{{FlowID: "main"}}, Flows: map[string]string{"main": p}},
			Flows:     map[string]map[string]any{"main": leafFlow("main")},
			FlowBytes: map[string][]byte{"main": []byte(mustJSON(t, leafFlow("main")))},
		}
		var buf bytes.Buffer
		if err := Write(&buf, b); err != nil {
			t.Fatalf("Write(%q): %v", p, err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var manifest []byte
		for _, f := range zr.File {
			names = append(names, f.Name)
			if f.Name == "manifest.json" {
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				manifest, _ = io.ReadAll(rc)
				rc.Close()
			}
		}
		m, err := ParseManifest(manifest)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(names, m.Flows["main"]) {
			t.Errorf("given flows.main = %q, the written manifest names %q but the archive's entries are %q: a reader that opens the manifest path verbatim (Python's zf.read) finds no such file", p, m.Flows["main"], names)
		}
	}
}

// Python's manifest reader takes `raw.get(snake) or raw.get(camel)` and
// strips bundle_format_version: an empty snake_case value falls through to
// its camelCase alias and " 1" is format 1. ParseManifest keeps the empty
// value (bundle_version becomes the default 0.0.0: a different bundle
// ref, silently) and refuses " 1".
func TestManifestAliasesAndFormatAsPython(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "x"}, map[string]any{
		"bundle_version": "", "bundleVersion": "2.0.0",
	})
	got, err := ParseManifest([]byte(mustJSON(t, m)))
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	if got.BundleVersion != "2.0.0" {
		t.Errorf("bundle_version \"\" with bundleVersion 2.0.0: got %q, Python reads 2.0.0", got.BundleVersion)
	}
	m = manifestWith(fixtureOptions{ID: "x"}, map[string]any{"bundle_format_version": " 1"})
	if _, err := ParseManifest([]byte(mustJSON(t, m))); err != nil {
		t.Errorf(`bundle_format_version " 1" (Python strips it: format 1): %v`, err)
	}
}

// gateway-api.md §2: "When a bundle_version starts with draft.
// (case-insensitive), that version is a draft", and the latest version is
// taken among published ones. isDraftVersion compares case-sensitively,
// so "Draft.1" (a version the registry's [A-Za-z0-9_.-] rule allows) is
// taken as published and, being newer, wins over the published "dev".
func TestDraftPrefixIsCaseInsensitive(t *testing.T) {
	b := &Bundle{Manifest: Manifest{BundleVersion: "Draft.1"}}
	if !b.IsDraft() {
		t.Errorf(`IsDraft("Draft.1") = false; gateway-api §2: a version starting with "draft." (case-insensitive) is a draft`)
	}
	if got := latest(versions([2]string{"Draft.1", "2027-01-01"}, [2]string{"dev", "2026-01-01"})).Manifest.BundleVersion; got != "dev" {
		t.Errorf("latest(Draft.1, dev) = %s, want the only published version dev", got)
	}
}

// Python's reader decodes manifest.json and each flow with json.loads,
// which reads the NaN, Infinity and -Infinity literals json.dumps writes
// for such floats: a flow saved by a Python tool with one in a pin
// default, or a manifest whose metadata holds one, loads there, so it
// loads here (docs/compatibility.md, "NaN and ±Infinity"). The values are
// json.Number("NaN") and so on; one that reaches a run's vars is refused
// there, naming its path.
func TestPythonNaNLiteralsInBundleAreRead(t *testing.T) {
	flow := `{"id":"main","name":"main","entryNode":"s","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"x","type":"number"}],"pinDefaults":{"x":NaN}}}],
 "edges":[]}`
	man := mustJSON(t, fixtureManifest(fixtureOptions{ID: "nan", Flows: []string{"main"}}))
	b, err := ReadBytes(makeZip(t, map[string]string{"manifest.json": man, "flows/main.json": flow}), "nan.flow")
	if err != nil {
		t.Fatalf("flow with a NaN pin default (json.loads reads it): %v", err)
	}
	node := b.Flows["main"]["nodes"].([]any)[0].(map[string]any)
	if x := node["data"].(map[string]any)["pinDefaults"].(map[string]any)["x"]; x != json.Number("NaN") {
		t.Errorf("pin default x = %#v, want json.Number(\"NaN\")", x)
	}
	manInf := strings.Replace(man, `"metadata":{`, `"metadata":{"score":Infinity,"low":-Infinity,`, 1)
	if manInf == man {
		t.Fatalf("fixture manifest has no metadata object: %s", man)
	}
	b, err = ReadBytes(makeZip(t, map[string]string{"manifest.json": manInf, "flows/main.json": mustJSON(t, leafFlow("main"))}), "inf.flow")
	if err != nil {
		t.Fatalf("manifest with Infinity in its metadata (json.loads reads it): %v", err)
	}
	if got := b.Manifest.Metadata["score"]; got != json.Number("Infinity") {
		t.Errorf("metadata score = %#v, want json.Number(\"Infinity\")", got)
	}
	// Other literals stay refused, as json.loads refuses them.
	for _, lit := range []string{"nan", "Inf", "+Infinity", "undefined"} {
		bad := strings.Replace(flow, "NaN", lit, 1)
		if _, err := DecodeFlow([]byte(bad)); err == nil {
			t.Errorf("flow with %s accepted; json.loads refuses it", lit)
		}
	}
}
