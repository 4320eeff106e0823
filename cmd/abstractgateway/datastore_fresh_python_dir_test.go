package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Python gateway on its default file backend (spec gateway-api §9.1:
// ABSTRACTGATEWAY_STORE_BACKEND=file is the default) that has not stored a
// run yet holds gateway_runner.lock (its runner's flock target, taken at
// start, runner.py) and artifacts/, but no run_*.json, ledger_*.jsonl or
// commands.jsonl (JsonlCommandStore creates commands.jsonl on the first
// append only). detectStore takes that directory for an empty one and
// creates runtime.sqlite3 in it: the run goes to a second store the Python
// gateway never reads, and from then on --store auto picks SQLite in that
// directory for ever, even after the gateway has written run_*.json — the
// split detectStore exists to prevent. The command must either use the
// JSON-file store there or refuse and ask for --store.
func TestBundleRunOnAFreshPythonFileGatewayDataDirDoesNotCreateASecondStore(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "gateway_runner.lock"), []byte("pid=4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(data, "artifacts", "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--answer", "ok")
	_, statErr := os.Stat(filepath.Join(data, sqliteFile))
	if code == 0 {
		runs, _ := filepath.Glob(filepath.Join(data, "run_*.json"))
		if statErr == nil || len(runs) == 0 {
			t.Fatalf("run on a Python file-backend gateway's data dir went to a new %s (run files: %v), which that gateway never reads\n%s%s",
				sqliteFile, runs, out, errOut)
		}
		return
	}
	if statErr == nil || !strings.Contains(errOut, "--store") {
		t.Fatalf("exit %d: want the JSON-file store, or a refusal naming --store without creating %s\n%s%s", code, sqliteFile, out, errOut)
	}
}

// copyTree copies a directory of regular files.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Without the fix, --data-dir pointing at a data directory written by the
// Python gateway's default (JSON-file) backend: run_<id>.json /
// ledger_<id>.jsonl. The command neither uses that store nor refuses: it
// silently creates a second, SQLite store (runtime.sqlite3) beside the Python
// runs, writes its artifacts into the Python store's artifacts/ folder, and
// exits 0; the new run is invisible to the gateway that owns the directory.
func TestCLI_BundleRunOnAPythonJSONFileDataDir(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "store", "e2etest", "testdata", "python", "json"), data)

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--answer", "ok")
	_, sqlErr := os.Stat(filepath.Join(data, "runtime.sqlite3"))
	if code == 0 {
		res := cliResult(t, out)
		if _, err := os.Stat(filepath.Join(data, "run_"+res["run_id"].(string)+".json")); err != nil || sqlErr == nil {
			t.Errorf("--data-dir holds a Python JSON-file store (run_*.json, ledger_*.jsonl); bundle run exited 0 "+
				"but stored run %v in a new SQLite file beside it (runtime.sqlite3 created: %v, run_<id>.json written: %v): "+
				"it should use the JSON-file store or refuse the directory",
				res["run_id"], sqlErr == nil, err == nil)
		}
		return
	}
	if sqlErr == nil || errOut == "" {
		t.Errorf("refused the Python JSON-file data dir (exit %d) but created runtime.sqlite3 in it (%v) or said nothing: %q",
			code, sqlErr == nil, errOut)
	}
}
