package bundle

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// putBundle writes a one-flow-per-entrypoint bundle id@version to file
// in dir; eps maps each flow id to its entrypoint name.
func putBundle(t *testing.T, dir, file, id, version string, eps [][2]string) {
	t.Helper()
	var flows []string
	var list []any
	for _, ep := range eps {
		flows = append(flows, ep[0])
		list = append(list, map[string]any{"flow_id": ep[0], "name": ep[1]})
	}
	m := fixtureManifest(fixtureOptions{ID: id, Version: version, Flows: flows})
	m["entrypoints"] = list
	files := map[string]string{"manifest.json": mustJSON(t, m)}
	for _, f := range flows {
		files["flows/"+f+".json"] = mustJSON(t, leafFlow(f))
	}
	writeFile(t, filepath.Join(dir, file), makeZip(t, files))
}

// An entrypoint name carried by two entrypoints of the one bundle it
// matches is ambiguous: resolving it is an error naming both flows, not
// the first of them (§8.5: a name must match exactly one entrypoint).
func TestEntrypointNameOfTwoEntrypointsIsAmbiguous(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putBundle(t, dir, "app@1.0.0.flow", "app", "1.0.0", [][2]string{{"a", "Same"}, {"b", "same"}})
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	b, flow, err := r.ResolveEntrypoint("SAME", "")
	if err == nil {
		t.Fatalf("ResolveEntrypoint(SAME) = %s:%s; want an error: two entrypoints are named so", b.Ref(), flow)
	}
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("ResolveEntrypoint(SAME): err = %v; want ErrNotFound naming flows a, b", err)
	}
}

// A trailing ".flow" is stripped only from a ref naming no path: with a
// backslash in it ("a\b.flow") the ref is a path, as in Python's
// `"/" not in s and "\\" not in s`, and does not name bundle a\b.
func TestResolveKeepsFlowSuffixOfBackslashPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putBundle(t, dir, "ab.flow", `a\b`, "1.0.0", [][2]string{{"main", "m"}})
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	if b, err := r.Resolve(`a\b`); err != nil || b.Manifest.BundleID != `a\b` {
		t.Fatalf(`control: Resolve(a\b) = %v, %v`, b, err)
	}
	if b, err := r.Resolve(`a\b.flow`); !errors.Is(err, ErrNotFound) {
		t.Fatalf(`Resolve(a\b.flow) = %v, %v; want ErrNotFound (a path, not bundle a\b)`, b, err)
	}
}

// An entrypoint name resolves to that entrypoint's flow, not to the
// bundle's default entrypoint: naming "Second" runs flow second even
// though main is the default.
func TestEntrypointNameResolvesItsOwnFlowNotTheDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putBundle(t, dir, "app@1.0.0.flow", "app", "1.0.0", [][2]string{{"main", "Main"}, {"second", "Second"}})
	r, errs := OpenRegistry(dir, nil)
	if len(errs) != 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	b, flow, err := r.ResolveEntrypoint("second", "")
	if err != nil {
		t.Fatalf("ResolveEntrypoint(second): %v", err)
	}
	if b.Ref() != "app@1.0.0" || flow != "second" {
		t.Fatalf("ResolveEntrypoint(second) = %s:%s, want app@1.0.0:second (the named entrypoint, not the default main)", b.Ref(), flow)
	}
}
