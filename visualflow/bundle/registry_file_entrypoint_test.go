package bundle

import (
	"path/filepath"
	"testing"
)

// TestResolveEntrypointFlowFileNameWithFlow: a ".flow" file name of the
// registry directory followed by ":<flow>" names that file's bundle,
// whatever bundle id it holds, as AbstractRuntime's
// WorkflowBundleRegistry.resolve_entrypoint (workflow_bundle/registry.py)
// splits "x.flow:main" first and then opens <bundles_dir>/x.flow. Stripping
// ".flow" and looking "release" up as a bundle id would find nothing.
func TestResolveEntrypointFlowFileNameWithFlow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "release.flow"), bundleZip(t, fixtureOptions{ID: "shop", Version: "2.0.0"}))
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	// Without a flow the file name resolves (control).
	if b, _, err := r.ResolveEntrypoint("release.flow", ""); err != nil || b.Ref() != "shop@2.0.0" {
		t.Fatalf("ResolveEntrypoint(release.flow) = %v, %v; want shop@2.0.0", b, err)
	}
	b, flow, err := r.ResolveEntrypoint("release.flow:main", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(release.flow:main): %v; Python's resolve_entrypoint opens release.flow and returns shop@2.0.0:main", err)
	}
	if b.Ref() != "shop@2.0.0" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(release.flow:main) = %s:%s, want shop@2.0.0:main", b.Ref(), flow)
	}
}
