package bundle

import "testing"

// §7.2: bundle_version (alias bundleVersion) has default "0.0.0". The
// reference reader treats a blank value like a missing one
// (`str(raw.get("bundle_version") or ... or "0.0.0").strip() or "0.0.0"`),
// so a manifest written with "bundle_version": "" loads as 0.0.0.
func TestBlankBundleVersionDefaults(t *testing.T) {
	raw := `{"bundle_format_version":"1","bundle_id":"demo","bundle_version":"",
	  "entrypoints":[{"flow_id":"f1"}],"flows":{"f1":"flows/f1.json"}}`
	m, err := ParseManifest([]byte(raw))
	if err != nil {
		t.Fatalf("ParseManifest: %v (want bundle_version defaulted to 0.0.0)", err)
	}
	if m.BundleVersion != "0.0.0" {
		t.Fatalf("bundle_version = %q, want 0.0.0", m.BundleVersion)
	}
}
