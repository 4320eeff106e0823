package bundle

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestBundleWithInfinityInMetadataWritesBack guarantees the read → write
// → read round trip of a bundle whose manifest metadata holds Infinity,
// which the reader accepts as Python's json.loads does
// (TestPythonNaNLiteralsInBundleAreRead).
//
// Spec visualflow.md §7.2 (`metadata`: free-form JSON, kept by the
// manifest) and §7.3; AbstractRuntime workflow_bundle/packer.py
// pack_workflow_bundle writes manifest.json with json.dumps (allow_nan
// defaults to True), i.e. the literal Infinity, so such metadata survives
// a write in Python.
func TestBundleWithInfinityInMetadataWritesBack(t *testing.T) {
	t.Parallel()
	man := mustJSON(t, fixtureManifest(fixtureOptions{ID: "inf", Flows: []string{"main"}}))
	manInf := strings.Replace(man, `"metadata":{`, `"metadata":{"score":Infinity,`, 1)
	b, err := ReadBytes(makeZip(t, map[string]string{"manifest.json": manInf, "flows/main.json": mustJSON(t, leafFlow("main"))}), "inf.flow")
	if err != nil {
		t.Fatalf("control: reading the bundle: %v", err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatalf("Write of a bundle the reader accepted: %v", err)
	}
	again, err := ReadBytes(buf.Bytes(), "copy.flow")
	if err != nil {
		t.Fatalf("reading the written bundle: %v", err)
	}
	if got := again.Manifest.Metadata["score"]; got != json.Number("Infinity") {
		t.Fatalf("metadata score after the round trip = %#v, want json.Number(\"Infinity\")", got)
	}
}

// TestNonFiniteFloatMetadataIsWrittenAsPython guarantees that metadata
// given as Go floats (Pack's PackOptions.Metadata, a Bundle built in code)
// holding NaN or ±Inf is written with Python's literals NaN, Infinity and
// -Infinity, as json.dumps writes float('nan') and float('inf'), and is
// read back as those literals.
func TestNonFiniteFloatMetadataIsWrittenAsPython(t *testing.T) {
	t.Parallel()
	b, err := ReadBytes(bundleZip(t, fixtureOptions{ID: "nan"}), "nan.flow")
	if err != nil {
		t.Fatal(err)
	}
	b.Manifest.Metadata = map[string]any{"nan": math.NaN(), "pos": math.Inf(1), "neg": math.Inf(-1)}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatalf("Write: %v", err)
	}
	again, err := ReadBytes(buf.Bytes(), "copy.flow")
	if err != nil {
		t.Fatalf("reading the written bundle: %v", err)
	}
	for key, want := range map[string]json.Number{"nan": "NaN", "pos": "Infinity", "neg": "-Infinity"} {
		if got := again.Manifest.Metadata[key]; got != want {
			t.Errorf("metadata %s after the round trip = %#v, want json.Number(%q)", key, got, want)
		}
	}
}
