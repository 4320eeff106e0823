package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// The JSON-file store now locks gateway_runner.lock, as a Python gateway
// runner does, and so creates it: detectStore still tells each kind of
// data dir apart. A dir our JSON-file store opened and left empty is a
// JSON dir (the lock file says so, as it does for a fresh Python one); a
// new dir opened with --store auto is SQLite and gets no runner lock file;
// a SQLite dir beside a runner lock file (a Python gateway on its SQLite
// backend locks it too) stays SQLite.
func TestDetectStoreBesideTheRunnerLockFile(t *testing.T) {
	t.Parallel()
	jsonDir := t.TempDir()
	st, err := jsonfile.New(jsonfile.Config{Dir: jsonDir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := detectStore(jsonDir); err != nil || got != storeJSON {
		t.Errorf("a dir the JSON-file store opened and left empty: %q, %v; want json", got, err)
	}

	newDir := filepath.Join(t.TempDir(), "new")
	ds, err := openDataStore(t.Context(), newDir, storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	if ds.kind != storeSQLite {
		t.Errorf("a new dir opened with --store auto: %q, want sqlite", ds.kind)
	}
	if err := ds.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(newDir, "gateway_runner.lock")); err == nil {
		t.Error("the SQLite store created gateway_runner.lock")
	}
	if got, err := detectStore(newDir); err != nil || got != storeSQLite {
		t.Errorf("the dir of a new SQLite store: %q, %v; want sqlite", got, err)
	}

	for _, db := range []string{sqliteFile, pythonSQLiteFile} {
		dir := t.TempDir()
		for _, name := range []string{db, "gateway_runner.lock"} {
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := detectStore(dir); err != nil || got != storeSQLite {
			t.Errorf("a dir holding %s and gateway_runner.lock: %q, %v; want sqlite", db, got, err)
		}
	}
}
