package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clearRegistryEnv blanks every variable DefaultRegistryDir reads and
// points HOME at a fresh directory, returned resolved.
func clearRegistryEnv(t *testing.T) string {
	t.Helper()
	for _, name := range RegistryDirEnv {
		t.Setenv(name, "")
	}
	home := realTempDir(t)
	t.Setenv("HOME", home)
	return home
}

func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustDefaultDir(t *testing.T) string {
	t.Helper()
	dir, err := DefaultRegistryDir()
	if err != nil {
		t.Fatalf("DefaultRegistryDir: %v", err)
	}
	return dir
}

func TestDefaultRegistryDirTakesTheFirstNonBlankVariable(t *testing.T) {
	clearRegistryEnv(t)
	base := realTempDir(t)
	for _, name := range RegistryDirEnv {
		t.Setenv(name, filepath.Join(base, strings.ToLower(name)))
	}
	t.Setenv(RegistryDirEnv[0], " \t ") // blank: passed over
	for i, name := range RegistryDirEnv[1:] {
		want := filepath.Join(base, strings.ToLower(name))
		if got := mustDefaultDir(t); got != want {
			t.Fatalf("with %v blank: got %s, want %s (from %s)", RegistryDirEnv[:i+1], got, want, name)
		}
		t.Setenv(name, "")
	}
	// All blank: the home default, not an error.
	if got := mustDefaultDir(t); !strings.HasSuffix(got, filepath.Join(".abstractframework", "workflows")) {
		t.Fatalf("all variables blank: got %s", got)
	}
}

func TestDefaultRegistryDirTrimsExpandsAndResolves(t *testing.T) {
	home := clearRegistryEnv(t)
	name := RegistryDirEnv[0]

	t.Setenv(name, "  ~/bundles\n")
	if got, want := mustDefaultDir(t), filepath.Join(home, "bundles"); got != want {
		t.Fatalf("~ expansion: got %s, want %s", got, want)
	}

	cwd := realTempDir(t)
	t.Chdir(cwd)
	t.Setenv(name, "rel/dir")
	if got, want := mustDefaultDir(t), filepath.Join(cwd, "rel", "dir"); got != want {
		t.Fatalf("relative value: got %s, want %s", got, want)
	}

	// A link in the existing part of the path is resolved; the missing
	// rest is kept as written.
	real := filepath.Join(cwd, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(name, filepath.Join(cwd, "link", "not", "yet"))
	if got, want := mustDefaultDir(t), filepath.Join(real, "not", "yet"); got != want {
		t.Fatalf("through a link: got %s, want %s", got, want)
	}
}

func TestDefaultRegistryDirUnknownUserNamesTheVariable(t *testing.T) {
	clearRegistryEnv(t)
	name := RegistryDirEnv[2]
	t.Setenv(name, "~no-such-user-zq9/flows")
	_, err := DefaultRegistryDir()
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "no-such-user-zq9") {
		t.Fatalf("got %v, want an error naming %s and the user", err, name)
	}
}

func TestDefaultRegistryDirFallsBackToFlowsBundlesThenHome(t *testing.T) {
	home := clearRegistryEnv(t)
	cwd := realTempDir(t)
	t.Chdir(cwd)
	wantHome := filepath.Join(home, ".abstractframework", "workflows")

	if got := mustDefaultDir(t); got != wantHome {
		t.Fatalf("no ./flows/bundles: got %s, want %s", got, wantHome)
	}
	// A file named flows/bundles is not a registry directory.
	if err := os.Mkdir(filepath.Join(cwd, "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "flows", "bundles"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mustDefaultDir(t); got != wantHome {
		t.Fatalf("./flows/bundles a file: got %s, want %s", got, wantHome)
	}
	if err := os.Remove(filepath.Join(cwd, "flows", "bundles")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(cwd, "flows", "bundles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := mustDefaultDir(t), filepath.Join(cwd, "flows", "bundles"); got != want {
		t.Fatalf("./flows/bundles a directory: got %s, want %s", got, want)
	}
	// A variable still wins over the directory.
	t.Setenv(RegistryDirEnv[3], filepath.Join(home, "legacy"))
	if got, want := mustDefaultDir(t), filepath.Join(home, "legacy"); got != want {
		t.Fatalf("variable over ./flows/bundles: got %s, want %s", got, want)
	}
}

// The variables are read in AbstractRuntime's priority order
// (default_workflow_bundles_dir): the shared framework directory first,
// then the gateway's, then the editor's publish and legacy directories.
// The list is checked by name, so reordering it is caught.
func TestDefaultRegistryDirVariableOrder(t *testing.T) {
	want := []string{"ABSTRACTFRAMEWORK_WORKFLOWS_DIR", "ABSTRACTGATEWAY_FLOWS_DIR", "ABSTRACTFLOW_PUBLISH_DIR", "ABSTRACTFLOW_FLOWS_DIR"}
	if strings.Join(RegistryDirEnv, ",") != strings.Join(want, ",") {
		t.Fatalf("RegistryDirEnv = %v, want %v", RegistryDirEnv, want)
	}
	clearRegistryEnv(t)
	base := realTempDir(t)
	t.Setenv("ABSTRACTGATEWAY_FLOWS_DIR", filepath.Join(base, "gateway"))
	t.Setenv("ABSTRACTFRAMEWORK_WORKFLOWS_DIR", filepath.Join(base, "framework"))
	if got := mustDefaultDir(t); got != filepath.Join(base, "framework") {
		t.Fatalf("both set: got %s, want the ABSTRACTFRAMEWORK_WORKFLOWS_DIR one", got)
	}
}
