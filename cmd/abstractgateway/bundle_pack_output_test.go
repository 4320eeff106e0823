package main

import (
	"os"
	"path/filepath"
	"testing"
)

// `bundle pack -o X` where X is one of the flow files being packed (the
// root, or a subflow the root references: `-o flows/shout.json` typed
// for `-o shout.flow`) replaces that VisualFlow source with the zip
// archive and exits 0: the user's flow is destroyed by the command that
// read it. Pack must refuse an output path that is one of its inputs
// (exit non-zero, naming the file) and leave the file as it was.
func TestPackRefusesToOverwriteAFlowItPacks(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for name, body := range map[string]string{"greet.json": askFlow, "shout.json": shoutFlow} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, victim := range []string{"greet.json", "shout.json"} {
		out := filepath.Join(src, victim)
		code, stdout, stderr := call(t, "pack", "-o", out, filepath.Join(src, "greet.json"))
		after, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"greet.json": askFlow, "shout.json": shoutFlow}[victim]
		if string(after) != want {
			t.Fatalf("pack -o %s (one of its input flows): exit %d, and %s was overwritten (%d bytes, was %d)\n%s%s",
				victim, code, victim, len(after), len(want), stdout, stderr)
		}
		if code == 0 {
			t.Fatalf("pack -o %s (one of its input flows): exit 0\n%s%s", victim, stdout, stderr)
		}
	}
}

// bundle pack -o into a directory that does not exist yet (dist/, out/).
//
// Reference: lpalbou/AbstractRuntime
// src/abstractruntime/workflow_bundle/packer.py, pack_workflow_bundle:
// `out.parent.mkdir(parents=True, exist_ok=True)` before writing the zip;
// AbstractFlow's `abstractflow bundle pack --out out/my_bundle.flow` (and
// the workflow-bundles doc's example out_path="out/my_bundle.flow") rely
// on it.
//
// bundle pack used to fail with exit 1 and "creating temp file for …: no
// such file or directory", after having read and compiled the bundle.
func TestPackCreatesTheOutputDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "dist", "nested", "greet.flow")
	code, stdout, stderr := call(t, "pack", "-o", out, writeGreetSources(t, dir))
	if code != 0 {
		t.Fatalf("pack -o %s (parent missing): exit %d\n%s%s", out, code, stdout, stderr)
	}
	if code, stdout, stderr := call(t, "validate", out); code != 0 {
		t.Errorf("the packed bundle does not validate: exit %d\n%s%s", code, stdout, stderr)
	}
}

// Without the fix, `bundle pack` derives its default output file name from
// the bundle id without checking it: `-id ../escaped` writes
// ../escaped@0.0.0.flow outside the current directory, `-id a/b` fails with a
// temp-file error about a missing directory. A bundle id no registry accepts
// (spec §7.2: [A-Za-z0-9_-]) should be refused, or at least not become a
// path. Not parallel: it changes the working directory.
func TestCLI_PackDefaultOutputStaysInTheCurrentDirectory(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "shout.json")
	if err := os.WriteFile(src, []byte(shoutFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	code, out, errOut := call(t, "pack", "-id", "../escaped", src)
	if _, err := os.Stat(filepath.Join(root, "escaped@0.0.0.flow")); err == nil {
		t.Errorf("bundle pack -id ../escaped (exit %d) wrote %s outside the current directory %s\n%s%s",
			code, filepath.Join(root, "escaped@0.0.0.flow"), work, out, errOut)
	}
}
