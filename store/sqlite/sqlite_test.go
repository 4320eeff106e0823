package sqlite_test

import (
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// testLogger routes the store's logs to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// open opens a store on path (owning its file, with the default cache)
// and closes it when the test ends.
func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	return openWith(t, sqlite.Config{Path: path})
}

// openShared opens a store that lets other connections at the file.
func openShared(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	return openWith(t, sqlite.Config{Path: path, Shared: true})
}

func openWith(t testing.TB, cfg sqlite.Config) *sqlite.Store {
	t.Helper()
	cfg.Logger = testLogger(t)
	s, err := sqlite.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New(%s): %v", cfg.Path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// TestStore runs the conformance suite on every mode: owning the file
// with the default cache, with a cache so small it evicts all the time,
// without cache, and shared.
func TestStore(t *testing.T) {
	t.Parallel()
	modes := map[string]sqlite.Config{
		"exclusive":  {},
		"tiny cache": {CacheBytes: 2048},
		"no cache":   {CacheBytes: -1},
		"shared":     {Shared: true},
	}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) store.Store {
				c := cfg
				c.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
				return openWith(t, c)
			})
		})
	}
}

// BenchmarkStore: the shared store benchmarks on SQLite NORMAL and FULL,
// and on two configurations whose reads all go to the file, the way a
// read of a run the cache let go of does: a store without its cache, and
// one opened shared (no cache, each read its own read transaction).
func BenchmarkStore(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  sqlite.Config
	}{
		{"NORMAL", sqlite.Config{Synchronous: "NORMAL"}},
		{"FULL", sqlite.Config{Synchronous: "FULL"}},
		{"uncached", sqlite.Config{CacheBytes: -1}},
		{"shared", sqlite.Config{Shared: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			storetest.Bench(b, func(b *testing.B) store.Store {
				cfg := c.cfg
				cfg.Path = filepath.Join(b.TempDir(), "runtime.sqlite3")
				s, err := sqlite.New(b.Context(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Close() })
				return s
			})
		})
	}
}

// rawDB opens the database at path directly, as Python or a tool would
// (the caller closes it: a store opening the file exclusively needs it
// closed first).
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// ledgerHead reads runID's ledger_heads.last_seq through db, 0 when the
// run has no head row.
func ledgerHead(t testing.TB, db *sql.DB, runID string) int64 {
	t.Helper()
	var head int64
	if err := db.QueryRow(`SELECT COALESCE((SELECT last_seq FROM ledger_heads WHERE run_id = ?), 0)`, runID).Scan(&head); err != nil {
		t.Fatal(err)
	}
	return head
}
