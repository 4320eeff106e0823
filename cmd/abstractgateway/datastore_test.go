package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTemporaryDataDirIsRemovedOnClose: without --data-dir the store
// lives in a temporary directory that close removes (openDataStore's
// doc; bundle run's usage: "removed at the end").
func TestTemporaryDataDirIsRemovedOnClose(t *testing.T) {
	ds, err := openDataStore(context.Background(), "", storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.temp {
		t.Fatalf("data store in %s not marked temporary", ds.dir)
	}
	if _, err := os.Stat(ds.dir); err != nil {
		t.Fatal(err)
	}
	if err := ds.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ds.dir); !errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(ds.dir)
		t.Fatalf("temporary data dir %s left after close (stat: %v)", ds.dir, err)
	}
}

// TestDetectStoreRecognisesEachJSONFileOfThePythonLayout: --store auto
// takes a data dir holding any file of the Python gateway's JSON-file
// layout (run_*.json, ledger_*.jsonl, commands.jsonl, commands_cursor.json,
// gateway_runner.lock) for the JSON-file
// store (storeHelp); other files, an empty or a missing dir give SQLite.
func TestDetectStoreRecognisesEachJSONFileOfThePythonLayout(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  storeKind
	}{
		{[]string{"commands.jsonl"}, storeJSON},
		{[]string{"run_0a1b.json"}, storeJSON},
		{[]string{"ledger_0a1b.jsonl"}, storeJSON},
		{[]string{"commands_cursor.json"}, storeJSON},
		{[]string{"gateway_runner.lock"}, storeJSON},
		{[]string{"notes.json", "run_0a1b.jsonl", "ledger_0a1b.json"}, storeSQLite},
		{nil, storeSQLite},
		{[]string{sqliteFile, "run_0a1b.json"}, storeSQLite},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := detectStore(dir); err != nil || got != tc.want {
			t.Errorf("data dir with %q: %q, %v; want %q", tc.files, got, err, tc.want)
		}
	}
	if got, err := detectStore(filepath.Join(t.TempDir(), "new")); err != nil || got != storeSQLite {
		t.Errorf("missing data dir: %q, %v; want sqlite", got, err)
	}
}
