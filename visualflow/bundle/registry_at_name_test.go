package bundle

import (
	"testing"
)

// An entrypoint name is a reference form of its own (spec visualflow.md
// §8.5: "an entrypoint name (case-insensitive; must match exactly one
// bundle)"). AbstractRuntime's resolve_entrypoint tries the name look-up
// whenever resolve_bundle fails, whatever the failure, so a name starting
// with '@' ("@home", whose bundle part is empty) resolves. What would
// break: falling back to the names only on ErrNotFound, which returned
// Resolve's "empty bundle reference" error instead.
func TestEntrypointNameStartingWithAtResolves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putBundle(t, dir, "app@1.0.0.flow", "app", "1.0.0", [][2]string{{"main", "@home"}})
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	b, flow, err := r.ResolveEntrypoint("@home", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(@home): %v; want app@1.0.0:main, the entrypoint of that name (as Python resolves it)", err)
	}
	if b.Ref() != "app@1.0.0" || flow != "main" {
		t.Fatalf("ResolveEntrypoint(@home) = %s:%s, want app@1.0.0:main", b.Ref(), flow)
	}
}
