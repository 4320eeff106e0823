package bundle

import (
	"path/filepath"
	"testing"
)

// TestResolveEntrypointByFileNameOfDuplicateBundleFile guarantees that
// every valid ".flow" file of the registry directory resolves by its file
// name, also one holding the same bundle_id@bundle_version as a file that
// sorts before it (a copy kept under another name), and that it resolves
// to the bundle the registry keeps for that ref.
//
// Spec visualflow.md §8.5: entry-point references accept "a `.flow` file
// name in the registry directory". AbstractRuntime workflow_bundle/
// registry.py WorkflowBundleRegistry.resolve_entrypoint opens
// <bundles_dir>/<name>.flow directly and returns its manifest's
// bundle_id@bundle_version and entrypoint, whatever other files hold.
func TestResolveEntrypointByFileNameOfDuplicateBundleFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	zip := bundleZip(t, fixtureOptions{ID: "shop", Version: "2.0.0"})
	writeFile(t, filepath.Join(dir, "shop@2.0.0.flow"), zip)
	writeFile(t, filepath.Join(dir, "zz-copy.flow"), zip) // sorts after: the duplicate
	r, _ := OpenRegistry(dir, nil)
	kept, flow, err := r.ResolveEntrypoint("shop@2.0.0.flow", "")
	if err != nil || kept.Ref() != "shop@2.0.0" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(shop@2.0.0.flow) = %v, %q, %v", kept, flow, err)
	}
	b, flow, err := r.ResolveEntrypoint("zz-copy.flow", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(zz-copy.flow): %v; Python opens <dir>/zz-copy.flow and returns shop@2.0.0:main", err)
	}
	if b != kept || flow != "main" {
		t.Fatalf("ResolveEntrypoint(zz-copy.flow) = %s:%s (%p), want shop@2.0.0:main, the kept bundle (%p)", b.Ref(), flow, b, kept)
	}
}
