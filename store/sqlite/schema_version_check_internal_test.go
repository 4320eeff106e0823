package sqlite

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// countingQuery counts the queries run through a writer statement.
type countingQuery struct {
	driver.StmtQueryContext
	n *atomic.Int64
}

func (c countingQuery) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	c.n.Add(1)
	return c.StmtQueryContext.QueryContext(ctx, args)
}

// TestSchemaVersionReadOnlyBySharedWrites: a shared store reads PRAGMA
// schema_version at the start of each write transaction, to notice
// columns a newer Python runtime adds while it is open (sharedTx,
// syncNewerPythonTrigger); an owned store holds its file exclusively, so
// no other process can change its schema, and its commits must not pay
// for that statement.
func TestSchemaVersionReadOnlyBySharedWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cfg   Config
		reads func(commits int64) bool
	}{
		{"owned", Config{}, func(c int64) bool { return c == 0 }},
		{"owned no redo", Config{NoRedoLog: true}, func(c int64) bool { return c == 0 }},
		{"owned no cache", Config{CacheBytes: -1}, func(c int64) bool { return c == 0 }},
		{"shared", Config{Shared: true}, func(c int64) bool { return c >= 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s, err := New(t.Context(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			var n atomic.Int64
			st := s.w.schemaVersion
			st.q = countingQuery{StmtQueryContext: st.q, n: &n}
			commitRuns(t, s, 3)
			if err := s.Settle(t.Context()); err != nil { // the redo log's queue reaches the database too
				t.Fatal(err)
			}
			if got := n.Load(); !tc.reads(got) {
				t.Errorf("PRAGMA schema_version ran %d times for 3 commits; want 0 for an owned store, one per write for a shared one", got)
			}
		})
	}
}

// A database whose schema_migrations names a version newer than this
// binary's newest migration (by one) is refused at open, not written.
func TestOpenRefusesSchemaOneVersionNewer(t *testing.T) {
	t.Parallel()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', '2030-01-01T00:00:00+00:00')`,
		len(ms)+1); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s, err = New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err == nil {
		_ = s.Close()
		t.Fatalf("New opened a database at schema version %d, newer than the binary's %d", len(ms)+1, len(ms))
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("New: %v, want the newer-schema refusal", err)
	}
}
