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
