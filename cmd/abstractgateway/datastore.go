package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// storeKind is a --store choice.
type storeKind string

const (
	storeAuto   storeKind = "auto"   // what the data dir holds (detectStore)
	storeSQLite storeKind = "sqlite" // the embedded SQLite store, <dir>/runtime.sqlite3
	storeJSON   storeKind = "json"   // the JSON-file store of the Python gateway's layout
)

// File names that tell what a data dir holds.
const (
	sqliteFile       = "runtime.sqlite3" // this program's SQLite store
	pythonSQLiteFile = "gateway.sqlite3" // the Python gateway's SQLite store (spec gateway-api §9.2)
)

// storeFlagUsage documents --store for the commands that open a data dir.
const storeFlagUsage = "store of --data-dir: auto (what the directory holds, see above), sqlite or json"

// storeHelp explains --store in the commands' help texts.
const storeHelp = `--store picks the store of the data dir. auto (the default) uses what the
directory holds, in this order: runtime.sqlite3 → the embedded SQLite
store; a Python gateway's gateway.sqlite3 → the SQLite store on that
file, opened shared (the Python gateway may have it open too; its tables
stay readable by it); a Python gateway's JSON-file data dir (run_*.json,
ledger_*.jsonl, commands.jsonl, commands_cursor.json, gateway_runner.lock)
→ the JSON-file store, whose files that gateway reads; an empty or new
directory → SQLite. sqlite and json force a store.
`

// parseStoreKind checks a --store value.
func parseStoreKind(s string) (storeKind, error) {
	switch k := storeKind(s); k {
	case storeAuto, storeSQLite, storeJSON:
		return k, nil
	}
	return "", fmt.Errorf("--store %q: want auto, sqlite or json", s)
}

// dataStore is an open store of a data dir. It holds the store rather
// than embedding it: a wrapper type would hide the optional interfaces
// the store implements (store.LedgerFinder: without it every effect
// scans the whole ledger).
type dataStore struct {
	st   store.Store
	dir  string    // the data dir: the store's files and the artifacts
	kind storeKind // sqlite or json, never auto
	temp bool      // dir is a temporary directory, removed by close
}

// close closes the store (a SQLite store applies what it holds back)
// and removes a temporary dir.
func (d *dataStore) close() error {
	err := d.st.Close()
	if err != nil {
		err = fmt.Errorf("closing the %s store in %s: %w", d.kind, d.dir, err)
	}
	if d.temp {
		if rmErr := os.RemoveAll(d.dir); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("removing the temporary data dir: %w", rmErr))
		}
	}
	return err
}

// openDataStore opens the store of kind in dir, or, when dir is "", in a
// new temporary directory that close removes.
func openDataStore(ctx context.Context, dir string, kind storeKind) (*dataStore, error) {
	d := &dataStore{dir: dir}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "abstractgateway-run-")
		if err != nil {
			return nil, fmt.Errorf("creating a temporary data dir: %w", err)
		}
		d.dir, d.temp = tmp, true
	}
	var err error
	if d.kind, err = resolveStoreKind(d.dir, kind); err == nil {
		d.st, err = openStoreKind(ctx, d.dir, d.kind)
	}
	if err != nil {
		if d.temp {
			_ = os.RemoveAll(d.dir)
		}
		return nil, err
	}
	return d, nil
}

// resolveStoreKind turns auto into the store dir holds.
func resolveStoreKind(dir string, kind storeKind) (storeKind, error) {
	if kind != storeAuto {
		return kind, nil
	}
	return detectStore(dir)
}

// detectStore tells which store a data dir holds. Opening the wrong one
// would not fail: it would create a second, empty store beside the
// first, whose runs the owner of the directory never sees.
func detectStore(dir string) (storeKind, error) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	if exists(sqliteFile) || exists(pythonSQLiteFile) {
		return storeSQLite, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return storeSQLite, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading data dir %s: %w", dir, err)
	}
	for _, e := range entries {
		if isJSONStoreFile(e.Name()) {
			return storeJSON, nil
		}
	}
	return storeSQLite, nil
}

// isJSONStoreFile reports whether name is a file of the JSON-file
// store's layout (see package jsonfile), or of the Python file-backed
// gateway's data dir (spec gateway-api §9.1): a fresh one holds only
// gateway_runner.lock (and maybe commands_cursor.json) until its first
// run or command, and must not be taken for an empty dir.
func isJSONStoreFile(name string) bool {
	return name == "commands.jsonl" ||
		name == "commands_cursor.json" ||
		name == "gateway_runner.lock" ||
		strings.HasPrefix(name, "run_") && strings.HasSuffix(name, ".json") ||
		strings.HasPrefix(name, "ledger_") && strings.HasSuffix(name, ".jsonl")
}

func openStoreKind(ctx context.Context, dir string, kind storeKind) (store.Store, error) {
	// 0777 under the umask, as Python's mkdir gives: a group-shared data
	// dir stays writable by the group's other members.
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("creating data dir %s: %w", dir, err)
	}
	switch kind {
	case storeSQLite:
		cfg := sqliteConfig(dir)
		path := cfg.Path
		st, err := sqlite.New(ctx, cfg)
		if errors.Is(err, sqlite.ErrDatabaseInUse) {
			// The store's own hint names its Go option, which no flag sets.
			return nil, fmt.Errorf("data dir %s is in use by another process (another abstractgateway on it?): stop it or use another --data-dir (%w: %s)", dir, sqlite.ErrDatabaseInUse, path)
		}
		if err != nil {
			return nil, fmt.Errorf("opening the SQLite store %s: %w", path, err)
		}
		return st, nil
	case storeJSON:
		st, err := jsonfile.New(jsonfile.Config{Dir: dir})
		if err != nil {
			return nil, fmt.Errorf("opening the JSON-file store in %s: %w", dir, err)
		}
		return st, nil
	}
	return nil, fmt.Errorf("unknown store %q", kind)
}

// sqliteConfig is the SQLite store of dir: this program's runtime.sqlite3,
// or else a Python gateway's gateway.sqlite3 (the runtime's schema, which
// the store migrates in a way Python keeps reading and writing), opened
// shared because that gateway may be running on it. Neither present: a
// new runtime.sqlite3.
func sqliteConfig(dir string) sqlite.Config {
	ours := filepath.Join(dir, sqliteFile)
	if _, err := os.Stat(ours); err != nil {
		python := filepath.Join(dir, pythonSQLiteFile)
		if _, err := os.Stat(python); err == nil {
			return sqlite.Config{Path: python, Shared: true}
		}
	}
	return sqlite.Config{Path: ours}
}
