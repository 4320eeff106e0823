package bundle

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestEntrypointNameOfOlderVersionResolves guarantees that an entrypoint
// name carried only by an older installed version of a bundle (app@2.0.0
// renamed its entrypoint) resolves to that version.
//
// Spec visualflow.md §8.5: an entrypoint **name**, case-insensitive, "must
// match exactly one bundle". AbstractRuntime workflow_bundle/registry.py
// WorkflowBundleRegistry.resolve_entrypoint looks names up over
// `self.scan()`, every installed bundle version (not the latest of each
// id), and returns the single match.
func TestEntrypointNameOfOlderVersionResolves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	put := func(file, version, name string) {
		m := fixtureManifest(fixtureOptions{ID: "app", Version: version, Flows: []string{"main"}})
		m["entrypoints"] = []any{map[string]any{"flow_id": "main", "name": name}}
		writeFile(t, filepath.Join(dir, file), makeZip(t, map[string]string{
			"manifest.json":   mustJSON(t, m),
			"flows/main.json": mustJSON(t, leafFlow("main")),
		}))
	}
	put("app@1.0.0.flow", "1.0.0", "Greeter")
	put("app@2.0.0.flow", "2.0.0", "Hello")
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	// Control: the latest version's name resolves.
	if b, _, err := r.ResolveEntrypoint("hello", ""); err != nil || b.Ref() != "app@2.0.0" {
		t.Fatalf("ResolveEntrypoint(hello) = %v, %v", b, err)
	}
	b, flow, err := r.ResolveEntrypoint("greeter", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(greeter): %v; Python's name look-up scans every version and finds app@1.0.0:main", err)
	}
	if b.Ref() != "app@1.0.0" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(greeter) = %s:%s, want app@1.0.0:main", b.Ref(), flow)
	}
}

// TestEntrypointNameMatchesByCasefold guarantees that the entrypoint name
// look-up compares names as Python's str.casefold() does (full Unicode
// case folding): "STRASSE" names the entrypoint "Straße", since "ß"
// casefolds to "ss", which simple one-rune folding does not give.
//
// Spec visualflow.md §8.5 (entrypoint name, case-insensitive);
// AbstractRuntime workflow_bundle/registry.py
// WorkflowBundleRegistry.resolve_entrypoint: `needle = s.casefold()` and
// `ep_name.casefold() != needle`.
func TestEntrypointNameMatchesByCasefold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := fixtureManifest(fixtureOptions{ID: "roads", Version: "1.0.0", Flows: []string{"main"}})
	m["entrypoints"] = []any{map[string]any{"flow_id": "main", "name": "Straße"}}
	writeFile(t, filepath.Join(dir, "roads@1.0.0.flow"), makeZip(t, map[string]string{
		"manifest.json":   mustJSON(t, m),
		"flows/main.json": mustJSON(t, leafFlow("main")),
	}))
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	// Control: a simple case change resolves.
	if b, _, err := r.ResolveEntrypoint("STRAßE", ""); err != nil || b.Ref() != "roads@1.0.0" {
		t.Fatalf("ResolveEntrypoint(STRAßE) = %v, %v", b, err)
	}
	b, flow, err := r.ResolveEntrypoint("STRASSE", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(STRASSE): %v; Python: \"STRASSE\".casefold() == \"Straße\".casefold() == \"strasse\"", err)
	}
	if b.Ref() != "roads@1.0.0" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(STRASSE) = %s:%s, want roads@1.0.0:main", b.Ref(), flow)
	}
}

// TestEntrypointNameInSeveralVersionsPicksTheLatest guarantees that a name
// carried by two installed versions of one bundle resolves to the latest
// of them (installing a new version must not make a name ambiguous), and
// that a name two bundles carry resolves to neither: the error names both
// and wraps ErrNotFound. Spec visualflow.md §8.5: an entrypoint name
// "must match exactly one bundle". Python's resolve_entrypoint refuses the
// first case too (docs/compatibility.md).
func TestEntrypointNameInSeveralVersionsPicksTheLatest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// app@1.0.0 and app@2.0.0 carry Greeter; app@1.0.0 and other carry Shared.
	for _, ref := range [][2]string{{"app", "1.0.0"}, {"app", "2.0.0"}, {"other", "1.0.0"}} {
		m := fixtureManifest(fixtureOptions{ID: ref[0], Version: ref[1], Flows: []string{"main", "aux"}})
		switch ref[0] + "@" + ref[1] {
		case "app@1.0.0":
			m["entrypoints"] = []any{map[string]any{"flow_id": "main", "name": "Greeter"}, map[string]any{"flow_id": "aux", "name": "Shared"}}
		case "app@2.0.0":
			m["entrypoints"] = []any{map[string]any{"flow_id": "main", "name": "Greeter"}}
		default:
			m["entrypoints"] = []any{map[string]any{"flow_id": "main", "name": "Shared"}}
		}
		writeFile(t, filepath.Join(dir, ref[0]+"@"+ref[1]+".flow"), makeZip(t, map[string]string{
			"manifest.json":   mustJSON(t, m),
			"flows/main.json": mustJSON(t, leafFlow("main")),
			"flows/aux.json":  mustJSON(t, leafFlow("aux")),
		}))
	}
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	b, flow, err := r.ResolveEntrypoint("greeter", "")
	if err != nil || b.Ref() != "app@2.0.0" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(greeter) = %v:%s, %v; want app@2.0.0:main, the latest version carrying it", b, flow, err)
	}
	_, _, err = r.ResolveEntrypoint("shared", "")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "matches multiple bundles (app, other)") {
		t.Fatalf("ResolveEntrypoint(shared): %v; want ErrNotFound naming bundles app and other", err)
	}
}
