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

// A manifest whose flows or assets map has a key blank once stripped is
// refused, as Python's validate refuses it ("manifest.<name> keys must be
// non-empty strings"); Write, which validates the same way, does not
// write such a bundle (Python could not open it).
func TestBlankManifestMapKeyIsRefused(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "blank", Flows: []string{"main"}})
	m["flows"].(map[string]any)["  "] = "flows/main.json"
	if _, err := ParseManifest([]byte(mustJSON(t, m))); err == nil {
		t.Errorf(`ParseManifest accepted flows key "  "`)
	}
	m = fixtureManifest(fixtureOptions{ID: "blank", Flows: []string{"main"}})
	m["assets"] = map[string]any{" ": "assets/x.txt"}
	if _, err := ParseManifest([]byte(mustJSON(t, m))); err == nil {
		t.Errorf(`ParseManifest accepted assets key " "`)
	}
	b := &Bundle{
		Manifest: Manifest{
			BundleFormatVersion: "1", BundleID: "blank", BundleVersion: "1.0.0",
			Entrypoints: []Entrypoint{{FlowID: "main"}},
		},
		Flows:     map[string]map[string]any{"main": leafFlow("main"), " ": leafFlow("x")},
		FlowBytes: map[string][]byte{},
	}
	if err := Write(&bytes.Buffer{}, b); err == nil {
		t.Errorf(`Write wrote a manifest with flows key " "`)
	}
}

// zipOfEntries zips entries in order; nonUTF8 entries are written without
// the UTF-8 flag, as a legacy zip tool writes them.
func zipOfEntries(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate, NonUTF8: e.nonUTF8})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zipEntry struct {
	name, data string
	nonUTF8    bool
}

// An entry without the UTF-8 flag is named by its bytes decoded as cp437,
// as Python's zipfile names it: a legacy tool's "flows/caf\x82.json" is
// flows/café.json, which the manifest names. Such an entry and a flagged
// one of the same decoded name are duplicates.
func TestLegacyCP437EntryNameIsFound(t *testing.T) {
	man := mustJSON(t, fixtureManifest(fixtureOptions{ID: "legacy", Flows: []string{"main"}}))
	man = strings.Replace(man, "flows/main.json", "flows/caf\u00e9.json", 1)
	flow := mustJSON(t, leafFlow("main"))
	data := zipOfEntries(t,
		zipEntry{"manifest.json", man, false},
		zipEntry{"flows/caf\x82.json", flow, true}, // 0x82 is 'é' in cp437
	)
	b, err := ReadBytes(data, "legacy.flow")
	if err != nil {
		t.Fatalf("flow entry with a cp437 name: %v", err)
	}
	if _, ok := b.Flows["main"]; !ok {
		t.Errorf("flow main not loaded")
	}

	data = zipOfEntries(t,
		zipEntry{"manifest.json", man, false},
		zipEntry{"flows/caf\u00e9.json", flow, false},
		zipEntry{"flows/caf\x82.json", flow, true},
	)
	if _, err := ReadBytes(data, "dup.flow"); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("UTF-8 and cp437 entries of one name: err = %v, want a duplicate entry error", err)
	}
}

// The cp437 table matches Python's codec at its ends and a few points.
func TestDecodeCP437(t *testing.T) {
	if len(cp437Table) != 128 {
		t.Fatalf("cp437 table has %d code points, want 128", len(cp437Table))
	}
	if got, want := decodeCP437("a\x80\x82\xb3\xe1\xfe\xff"), "aÇé│ß■\u00a0"; got != want {
		t.Errorf("decodeCP437 = %q, want %q", got, want)
	}
}

// A JSON file starting with a UTF-8 byte order mark is refused (as
// Python's json.loads refuses it), with an error that names the mark
// rather than showing its first byte.
func TestBOMErrorNamesTheBOM(t *testing.T) {
	man := mustJSON(t, fixtureManifest(fixtureOptions{ID: "x", Flows: []string{"main"}}))
	flow := mustJSON(t, leafFlow("main"))
	for name, files := range map[string]map[string]string{
		"manifest": {"manifest.json": "\ufeff" + man, "flows/main.json": flow},
		"flow":     {"manifest.json": man, "flows/main.json": "\ufeff" + flow},
	} {
		_, err := ReadBytes(makeZip(t, files), "x.flow")
		if err == nil || !strings.Contains(err.Error(), "byte order mark") {
			t.Errorf("%s with a BOM: err = %v, want one naming the byte order mark", name, err)
		}
	}
}

// A numeric bundle_version reads as Python's str() of the
// number json.loads built, so that the bundle gets Python's ref and
// workflow ids: 1.10 is "1.1", 1e2 is "100.0".
func TestNumericBundleVersionReadAsPython(t *testing.T) {
	for lit, want := range map[string]string{"1.10": "1.1", "1e2": "100.0", "2.50": "2.5", "3": "3", "12345678901234567890": "12345678901234567890"} {
		m := fixtureManifest(fixtureOptions{ID: "num", Flows: []string{"main"}})
		text := strings.Replace(mustJSON(t, m), `"bundle_version":"1.0.0"`, `"bundle_version":`+lit, 1)
		if !strings.Contains(text, `"bundle_version":`+lit) {
			t.Fatalf("fixture not rewritten: %s", text)
		}
		got, err := ParseManifest([]byte(text))
		if err != nil {
			t.Errorf("bundle_version %s: %v", lit, err)
		} else if got.BundleVersion != want {
			t.Errorf("bundle_version %s read as %q, want %q", lit, got.BundleVersion, want)
		}
	}
}

// Whitespace around the '@' and ':' of a reference is ignored, as Python's
// _split_bundle_ref and _parse_namespaced_workflow_id strip each side.
func TestReferenceSeparatorsIgnoreWhitespace(t *testing.T) {
	r := registryOf(t, map[string][]byte{
		"b1.flow": zipOfManifest(t, fixtureManifest(fixtureOptions{ID: "b", Version: "1.0.0"}), "main"),
		"b2.flow": zipOfManifest(t, fixtureManifest(fixtureOptions{ID: "b", Version: "2.0.0"}), "main"),
	})
	for ref, want := range map[string]string{
		"b @ 1.0.0": "b@1.0.0:main", "b@ ": "b@2.0.0:main", "b @1.0.0 : main": "b@1.0.0:main", "b : main": "b@2.0.0:main",
	} {
		b, flow, err := r.ResolveEntrypoint(ref, "")
		if err != nil {
			t.Errorf("ResolveEntrypoint(%q): %v", ref, err)
			continue
		}
		if got := b.Ref() + ":" + flow; got != want {
			t.Errorf("ResolveEntrypoint(%q) = %s, want %s", ref, got, want)
		}
	}
}

// Semver parts are compared as Python's unbounded ints (a part past 64
// bits still parses), each part stripped as Python's _try_parse_semver.
func TestSemverPartsAreUnbounded(t *testing.T) {
	vs := versions([2]string{"1.99999999999999999999999", "2027"}, [2]string{"1.100000000000000000000000", "2026"}, [2]string{"1. 5", "2028"})
	if got := latest(vs).Manifest.BundleVersion; got != "1.100000000000000000000000" {
		t.Errorf("latest = %s, want the greatest semver 1.100000000000000000000000", got)
	}
	if p, ok := semverParts(" 01. 2 .003 "); !ok || p != [3]string{"1", "2", "3"} {
		t.Errorf(`semverParts(" 01. 2 .003 ") = %v, %v`, p, ok)
	}
}

// Info-ZIP's zip (Linux distributions, macOS) writes a non-ASCII entry
// name as UTF-8 without the UTF-8 flag and adds a Unicode Path extra field
// (0x7075: version 1, CRC-32 of the header name, the UTF-8 name); Python's
// zipfile names the entry by it, and so does the reader.
func TestInfoZipUnicodePathExtraFieldNamesEntry(t *testing.T) {
	// The header name is the UTF-8 name itself, bit 11 clear.
	data := unicodePathZip(t, "flows/caf\u00e9.json", "flows/caf\u00e9.json", 1)
	// The writer must really have left bit 11 clear.
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if zr.File[1].Flags&0x800 != 0 {
		t.Fatalf("fixture: flow entry has the UTF-8 flag")
	}

	b, err := ReadBytes(data, "infozip.flow")
	if err != nil {
		t.Fatalf("Info-ZIP bundle with a Unicode Path extra field: %v (Python's zipfile names the entry flows/café.json)", err)
	}
	if _, ok := b.Flows["main"]; !ok {
		t.Errorf("flow main not loaded")
	}
}
