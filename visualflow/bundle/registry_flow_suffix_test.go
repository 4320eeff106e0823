package bundle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Reference: AbstractRuntime workflow_bundle/registry.py _split_bundle_ref:
// `if s.lower().endswith(".flow") and "/" not in s and "\\" not in s:
// s = s[:-5]`, so "mybundle.FLOW" and "mybundle@1.0.Flow" resolve. A
// ref naming a path ("sub/mybundle@1.0.flow") is neither stripped nor
// looked up by its base name in the registry directory (resolve_entrypoint
// tries the directory only for a bare file name).
func TestResolveStripsFlowSuffixInAnyCase(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(src, "main.json")
	if err := os.WriteFile(root, []byte(`{"id":"main","name":"Main","nodes":[],"edges":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Pack(root, src, bundle.PackOptions{BundleID: "mybundle", BundleVersion: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg")
	if err := os.Mkdir(reg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteFile(filepath.Join(reg, "mybundle@1.0.flow"), b); err != nil {
		t.Fatal(err)
	}
	r, errs := bundle.OpenRegistry(reg, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, ref := range []string{"mybundle.flow", "mybundle.FLOW", "mybundle@1.0.Flow"} {
		got, err := r.Resolve(ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", ref, err)
			continue
		}
		if got.Ref() != "mybundle@1.0" {
			t.Errorf("Resolve(%q) = %s", ref, got.Ref())
		}
	}
	for _, ref := range []string{"sub/mybundle@1.0.flow", `sub\mybundle.flow`} {
		if b, _, err := r.ResolveEntrypoint(ref, ""); err == nil {
			t.Errorf("ResolveEntrypoint(%q) = %s; want not found (a path, not a bundle ref)", ref, b.Ref())
		}
	}
}
