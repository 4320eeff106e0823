package sqlite

import (
	"path/filepath"
	"testing"
)

// TestSpecConnectionPragmas pins spec §4.4's connection settings:
// journal_mode=WAL, synchronous=NORMAL, foreign_keys=ON and
// busy_timeout=5000 on the store's connections (the writer, and a shared
// store's readers), with the default configuration.
func TestSpecConnectionPragmas(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db.sqlite"), Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		ctx := t.Context()
		var mode string
		var sync, fk, busy int
		c := s.wconn
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || sync != 1 || fk != 1 || busy != 5000 {
			t.Errorf("shared=%v writer: journal_mode %s, synchronous %d, foreign_keys %d, busy_timeout %d; want wal, 1 (NORMAL), 1, 5000",
				shared, mode, sync, fk, busy)
		}
		if !shared {
			continue
		}
		if err := s.rdb.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := s.rdb.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := s.rdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || fk != 1 || busy != 5000 {
			t.Errorf("shared reader: journal_mode %s, foreign_keys %d, busy_timeout %d; want wal, 1, 5000", mode, fk, busy)
		}
		// The readers are read-only: a write that strayed onto the pool
		// would run outside the writer turn and its transaction.
		var queryOnly int
		if err := s.rdb.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly); err != nil {
			t.Fatal(err)
		}
		if queryOnly != 1 {
			t.Errorf("shared reader: query_only %d; want 1", queryOnly)
		}
	}
}
