package bundle

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
)

// Two flow ids naming one path with the same content (as a bundle read
// with aliased flow ids has them) are written as one entry, and the
// bundle reads back with both ids. Refusing every shared path would make
// such a bundle, which reads, impossible to write back.
func TestWriteSharesOnePathWithEqualContent(t *testing.T) {
	t.Parallel()
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "share", Flows: []string{"main", "alias"}}))))
	if err != nil {
		t.Fatal(err)
	}
	m.Flows["alias"] = "flows/main.json"
	raw := []byte(mustJSON(t, leafFlow("main")))
	b := &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main"), "alias": leafFlow("main")},
		FlowBytes: map[string][]byte{"main": raw, "alias": raw}}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatalf("Write of two flow ids sharing one path with equal content: %v", err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 2 {
		t.Fatalf("archive has %d entries, want 2 (manifest.json and one flows/main.json)", len(zr.File))
	}
	back, err := ReadBytes(buf.Bytes(), "share.flow")
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if !bytes.Equal(back.FlowBytes["alias"], raw) || !bytes.Equal(back.FlowBytes["main"], raw) {
		t.Fatalf("read back flows = %v; want main and alias, both the shared entry", back.FlowBytes)
	}
}

// An entrypoint built in memory without interfaces is written with
// "interfaces": [], as Python's packer writes it, not null.
func TestWriteManifestHasEmptyInterfacesNotNull(t *testing.T) {
	t.Parallel()
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "ifaces"}))))
	if err != nil {
		t.Fatal(err)
	}
	m.Entrypoints = []Entrypoint{{FlowID: "main", Name: "main"}}
	text := writtenManifest(t, &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main")}})
	if !strings.Contains(text, `"interfaces": []`) || strings.Contains(text, `"interfaces": null`) {
		t.Fatalf("manifest.json = %s; want \"interfaces\": [] for the entrypoint", text)
	}
}

// A manifest built in memory without metadata or artifacts is written
// with "metadata": {} and "artifacts": {}, as Python's packer writes them,
// not null (dropping the nil artifacts default in Write would write null).
func TestWriteManifestHasEmptyMetadataNotNull(t *testing.T) {
	t.Parallel()
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "meta"}))))
	if err != nil {
		t.Fatal(err)
	}
	m.Metadata, m.Artifacts = nil, nil
	text := writtenManifest(t, &Bundle{Manifest: m, Flows: map[string]map[string]any{"main": leafFlow("main")}})
	if !strings.Contains(text, `"metadata": {}`) || !strings.Contains(text, `"artifacts": {}`) {
		t.Fatalf("manifest.json = %s; want \"metadata\": {} and \"artifacts\": {}", text)
	}
}

// manifest.json lists its members in the order Python's
// workflow_bundle_manifest_to_dict builds them, and a flow of the bundle
// that the manifest does not name is written at flows/<id>.json. Swapping
// two members, or another default path, would write a manifest that
// differs from Python's for the same bundle.
func TestWriteManifestMemberOrderAndDefaultFlowPath(t *testing.T) {
	t.Parallel()
	m, err := ParseManifest([]byte(mustJSON(t, fixtureManifest(fixtureOptions{ID: "order"}))))
	if err != nil {
		t.Fatal(err)
	}
	text := writtenManifest(t, &Bundle{Manifest: m,
		Flows: map[string]map[string]any{"main": leafFlow("main"), "extra": leafFlow("extra")}})
	last := -1
	for _, k := range []string{"bundle_format_version", "bundle_id", "bundle_version", "created_at", "entrypoints",
		"default_entrypoint", "flows", "artifacts", "assets", "metadata"} {
		i := strings.Index(text, `"`+k+`":`)
		if i <= last {
			t.Fatalf("manifest.json = %s; want %q after the members before it", text, k)
		}
		last = i
	}
	if !strings.Contains(text, `"extra": "flows/extra.json"`) {
		t.Fatalf("manifest.json = %s; want the unnamed flow extra at flows/extra.json", text)
	}
}
