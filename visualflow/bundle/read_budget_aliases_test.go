package bundle

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// aliasManifest is a manifest naming flows/main.json under ids flow ids
// (f0 the entrypoint).
func aliasManifest(t *testing.T, ids int) string {
	t.Helper()
	flows := map[string]any{}
	for i := range ids {
		flows[fmt.Sprintf("f%d", i)] = "flows/main.json"
	}
	m := fixtureManifest(fixtureOptions{ID: "alias", Flows: []string{"main"}})
	m["flows"] = flows
	m["entrypoints"] = []any{map[string]any{"flow_id": "f0"}}
	m["default_entrypoint"] = "f0"
	return mustJSON(t, m)
}

// A zip naming one entry under many flow ids is charged for it once per
// id from the declared sizes, before anything is inflated: 33 ids × 8 MiB
// is past maxBundleSize, so the bundle is refused as too large even
// though the entry is not JSON at all. Charging the entry once up front
// would inflate and decode it, reporting the flow's JSON instead.
func TestZipAliasedEntryRefusedFromDeclaredSizes(t *testing.T) {
	t.Parallel()
	body := strings.Repeat(" ", 8<<20) // not a JSON value
	data := zipEntries(t, [2]string{"manifest.json", aliasManifest(t, 33)}, [2]string{"flows/main.json", body})
	_, err := ReadBytes(data, "alias.flow")
	if err == nil || !strings.Contains(err.Error(), "larger than 256 MiB in all") || strings.Contains(err.Error(), "flow f") {
		t.Fatalf("33 flow ids naming one 8 MiB entry: err = %v; want it refused as too large before any flow is read", err)
	}
}

// A directory bundle has no declared sizes: each flow id that decodes an
// already read file is charged for it again, so one 8 MiB file named by
// 33 flow ids is refused as too large rather than decoded 33 times.
func TestDirectoryAliasedFileChargedPerFlowID(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "alias")
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(aliasManifest(t, 33)))
	writeFile(t, filepath.Join(dir, "flows", "main.json"), []byte(`{"id":"main","nodes":[],"edges":[]}`+strings.Repeat(" ", 8<<20)))
	b, err := Read(dir)
	if err == nil || !strings.Contains(err.Error(), "larger than 256 MiB in all") {
		n := 0
		if b != nil {
			n = len(b.Flows)
		}
		t.Fatalf("33 flow ids naming one 8 MiB file: err = %v (%d flows decoded); want it refused as too large", err, n)
	}
}

// Assets are not decoded: several asset names sharing one entry read it
// once and are charged for it once, so 33 names of one 8 MiB entry (over
// 256 MiB if each were charged) still load, each with the entry's bytes.
func TestAssetsSharingOneEntryAreChargedOnce(t *testing.T) {
	t.Parallel()
	m := fixtureManifest(fixtureOptions{ID: "assets", Flows: []string{"main"}})
	assets := map[string]any{}
	for i := range 33 {
		assets[fmt.Sprintf("a%d", i)] = "assets/blob.bin"
	}
	m["assets"] = assets
	blob := strings.Repeat("x", 8<<20)
	data := zipEntries(t, [2]string{"manifest.json", mustJSON(t, m)},
		[2]string{"flows/main.json", mustJSON(t, leafFlow("main"))}, [2]string{"assets/blob.bin", blob})
	b, err := ReadBytes(data, "assets.flow")
	if err != nil {
		t.Fatalf("33 asset names of one 8 MiB entry: %v; want the bundle loaded (the entry is read once)", err)
	}
	if len(b.Assets) != 33 || len(b.Assets["a32"]) != len(blob) {
		t.Fatalf("loaded %d assets (a32: %d bytes); want 33 of %d bytes", len(b.Assets), len(b.Assets["a32"]), len(blob))
	}
}
