package sqlite

import (
	"path/filepath"
	"testing"
)

// TestWALBatchKeepsAFrameRewrittenInItsTransaction: a transaction larger
// than the page cache spills pages to the WAL before it commits, and a
// page it changes again after the spill is rewritten in place in the
// frame it already has. Those frames are still gathered: the rewrite must
// land in the buffer. Were it dropped, the commit would hold the page as
// it was at the spill, and a reopened database would lose the later
// change. SQLite then rewrites the frame headers' checksums after the
// commit frame is out: the last of those writes is left gathered until
// the main file's COMMIT_PHASETWO, whose flush this also covers.
func TestWALBatchKeepsAFrameRewrittenInItsTransaction(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "spill.sqlite3")
	s, err := New(ctx, Config{Path: path, IdleCheckpoint: -1, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.wsem <- struct{}{}
	for _, q := range []string{
		"PRAGMA cache_size = 10", // a few pages: the transaction below spills
		"CREATE TABLE spill (k INTEGER PRIMARY KEY, v TEXT)",
		"BEGIN IMMEDIATE",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 400) INSERT INTO spill SELECT i, printf('old-%0200d', i) FROM n",
		"UPDATE spill SET v = printf('new-%0200d', k)",
		"COMMIT",
	} {
		if _, err := s.wconn.ExecContext(ctx, q); err != nil {
			<-s.wsem
			t.Fatalf("%s: %v", q, err)
		}
	}
	<-s.wsem

	img := filepath.Join(t.TempDir(), "img.sqlite3")
	copyCrashImage(t, s, path, img)
	c, err := New(ctx, Config{Path: img, CacheBytes: -1, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.wconn.QueryRowContext(ctx, "SELECT count(*) FROM spill WHERE v LIKE 'new-%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 400 {
		t.Fatalf("after a kill the database reopens with %d of 400 rows updated after the spill", n)
	}
}
