package bundle

import (
	"errors"
	"path/filepath"
	"testing"
)

// zipOfManifest builds a bundle zip from a manifest object, with a leaf
// flow for every id in flows.
func zipOfManifest(t *testing.T, m map[string]any, flows ...string) []byte {
	t.Helper()
	files := map[string]string{"manifest.json": mustJSON(t, m)}
	for _, f := range flows {
		files["flows/"+f+".json"] = mustJSON(t, leafFlow(f))
	}
	return makeZip(t, files)
}

// registryOf writes each named bundle zip into a fresh directory and opens
// it as a registry.
func registryOf(t *testing.T, files map[string][]byte) *Registry {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	return r
}

// §8.5: without a flow id, the manifest's default_entrypoint is used
// (not the first entrypoint).
func TestResolveEntrypointUsesDefaultEntrypoint(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "multi", Flows: []string{"first", "second"}}, map[string]any{
		"entrypoints": []any{
			map[string]any{"flow_id": "first", "name": "First"},
			map[string]any{"flow_id": "second", "name": "Second"},
		},
		"default_entrypoint": "second",
	})
	r := registryOf(t, map[string][]byte{"multi.flow": zipOfManifest(t, m, "first", "second")})
	b, flow, err := r.ResolveEntrypoint("multi", "")
	if err != nil || b.Ref() != "multi@1.0.0" || flow != "second" {
		t.Fatalf("ResolveEntrypoint(multi) = %v, %q, %v; want the default entrypoint second", b, flow, err)
	}
}

// §8.5: an entrypoint name must match exactly one bundle; a name shared by
// two bundles resolves to none.
func TestEntrypointNameMatchingTwoBundlesDoesNotResolve(t *testing.T) {
	named := func(id string) []byte {
		m := manifestWith(fixtureOptions{ID: id}, map[string]any{
			"entrypoints": []any{map[string]any{"flow_id": "main", "name": "Chat"}},
		})
		return zipOfManifest(t, m, "main")
	}
	r := registryOf(t, map[string][]byte{"one.flow": named("one"), "two.flow": named("two")})
	if b, flow, err := r.ResolveEntrypoint("chat", ""); err == nil || !errors.Is(err, ErrNotFound) {
		t.Fatalf("ResolveEntrypoint(chat) with two bundles naming an entrypoint Chat = %v, %q, %v; want not found", b, flow, err)
	}
	// With only one such bundle the name resolves.
	r = registryOf(t, map[string][]byte{"one.flow": named("one")})
	if b, flow, err := r.ResolveEntrypoint("CHAT", ""); err != nil || b.Manifest.BundleID != "one" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(CHAT) = %v, %q, %v; want one, main", b, flow, err)
	}
}

// A reference that is a bundle id picks that bundle's default entrypoint,
// even when another bundle has an entrypoint named like that id.
func TestBundleIDRefIsNotTakenOverByAnotherBundlesEntrypointName(t *testing.T) {
	alpha := zipOfManifest(t, fixtureManifest(fixtureOptions{ID: "alpha"}), "main")
	beta := zipOfManifest(t, manifestWith(fixtureOptions{ID: "beta", Flows: []string{"other"}}, map[string]any{
		"entrypoints": []any{map[string]any{"flow_id": "other", "name": "alpha"}},
	}), "other")
	r := registryOf(t, map[string][]byte{"alpha.flow": alpha, "beta.flow": beta})
	b, flow, err := r.ResolveEntrypoint("alpha", "")
	if err != nil || b.Manifest.BundleID != "alpha" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(alpha) = %v, %q, %v; want alpha, main", b, flow, err)
	}
}
