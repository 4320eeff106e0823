package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without the fix, `bundle validate DIR` on a directory without any .flow
// bundle (empty, a typo'd folder of flow JSON files, ...) prints nothing and
// exits 0, so a CI step "validate bundles/" passes having validated nothing.
func TestCLI_ValidateADirectoryWithoutBundlesFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.json"), []byte(askFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := call(t, "validate", dir)
	if code == 0 || strings.TrimSpace(out+errOut) == "" {
		t.Fatalf("validate of a directory holding no .flow bundle: exit %d, output %q; want a non-zero exit and a message saying no bundle was found", code, out+errOut)
	}
}

// Without the fix, a manifest.json with trailing garbage after the JSON
// object is accepted (`validate` says ok, `run` runs it), although
// manifest.json must be a JSON object (spec §7.1), Python's json.loads
// refuses it ("Extra data") and the reader refuses the same defect in a flow
// file.
func TestCLI_ValidateRefusesAManifestWithTrailingData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "trailing@1.flow")
	writeZip(t, p, map[string]string{
		"manifest.json":    `{"bundle_format_version":"1","bundle_id":"trailing","bundle_version":"1","entrypoints":[{"flow_id":"shout"}],"flows":{"shout":"flows/shout.json"}} garbage`,
		"flows/shout.json": shoutFlow,
	})
	code, out, _ := call(t, "validate", p)
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Errorf("manifest.json with trailing data after the object: validate exit %d\n%s", code, out)
	}
}
