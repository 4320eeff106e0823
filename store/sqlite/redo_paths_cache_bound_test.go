package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestRedoWALPathIsTheDatabasesWAL checks the promise of the package
// doc ("# Redo log": "Once the database holds the whole log and its WAL is
// synced, the log is rewound"; "A commit is as durable when RunCommit
// returns as a SQLite commit with the same synchronous setting: ... on disk
// with FULL") and of redoLog.walPath's comment ("the database's WAL, synced
// before a rewind"). With synchronous=FULL the database runs NORMAL behind
// the log, so the fsync of the WAL before a rewind (syncWALBeforeRewind),
// after a replay (openRedo) and after a failed redo record (recordedTx) is
// what keeps acknowledged commits on disk once the log no longer holds
// them.
//
// The store syncs Config.Path + "-wal", but SQLite resolves a symlinked
// database file and writes its WAL beside the target: the file the store
// syncs does not exist, syncFile takes a missing file as "nothing to
// sync", and the rewind goes ahead with the commits only in an unsynced
// WAL (lost by a power cut).
func TestRedoWALPathIsTheDatabasesWAL(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	target := filepath.Join(dir, "data", "runtime.sqlite3")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	first, err := New(ctx, Config{Path: target, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "runtime-link.sqlite3")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	s, err := New(ctx, Config{Path: link, Synchronous: "FULL", IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if s.redo == nil {
		t.Fatal("an owned store with a cache has no redo log")
	}
	r := redoRun(strings.Repeat("w", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	if err := s.Settle(ctx); err != nil { // the commit is in the WAL now
		t.Fatal(err)
	}
	var seq int
	var schema, file string
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA database_list").Scan(&seq, &schema, &file); err != nil {
		t.Fatal(err)
	}
	realWAL, err := os.Stat(file + "-wal")
	if err != nil {
		t.Fatalf("the WAL SQLite writes (%s-wal): %v", file, err)
	}
	synced, err := os.Stat(s.redo.walPath)
	if err != nil {
		t.Fatalf("the file the store fsyncs before rewinding the redo log, %s, is not the database's WAL "+
			"(%s-wal): %v; syncFile takes it as nothing to sync", s.redo.walPath, file, err)
	}
	if !os.SameFile(realWAL, synced) {
		t.Fatalf("the store fsyncs %s, SQLite writes %s-wal", s.redo.walPath, file)
	}
}

// TestRedoLogFollowsTheDatabaseFile checks the package doc's promise
// ("# Redo log": "opening a database replays exactly the records above
// it, whether the process was killed ..."; RunCommit: a commit is in the
// redo log when it returns) and docs/compatibility.md ("After a kill the
// database file alone lacks the commits the log holds: open it once with
// our binary (any store configuration ...)"). The log is found by the
// spelling of Config.Path, not by the database file SQLite opened (which
// resolves symlinks, and keeps its WAL beside the real file): a store that
// opened the database through a symlink and was killed leaves its
// acknowledged commits in <link>-redo, and opening the same database file
// by its real path replays nothing; the commit is missing (and the log's
// records, left behind, are later skipped or replayed over newer writes).
func TestRedoLogFollowsTheDatabaseFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	target := filepath.Join(dir, "data", "runtime.sqlite3")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "runtime-link.sqlite3")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	s, err := New(ctx, Config{Path: link, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.redo.heldForTest.Store(true) // the commit stays in the redo log, as when a kill comes first
	r := redoRun(strings.Repeat("k", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a")

	// What a kill leaves, with the same layout: the database and its WAL
	// under data/, the link beside them, and whatever redo log the store
	// wrote, under the name it gave it.
	img := t.TempDir()
	imgTarget := filepath.Join(img, "data", "runtime.sqlite3")
	if err := os.MkdirAll(filepath.Dir(imgTarget), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(imgTarget, filepath.Join(img, "runtime-link.sqlite3")); err != nil {
		t.Fatal(err)
	}
	s.wsem <- struct{}{}
	s.redo.mu.Lock()
	for _, suffix := range []string{"", "-wal", redoSuffix} {
		copyFile(t, target+suffix, imgTarget+suffix)
		copyFile(t, link+suffix, filepath.Join(img, "runtime-link.sqlite3")+suffix)
	}
	s.redo.mu.Unlock()
	<-s.wsem

	c := openImage(t, Config{Path: imgTarget})
	if _, err := c.RunGet(ctx, r.RunID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a commit acknowledged by a store that opened the database through a symlink is missing "+
				"when the same database file is opened after a kill: %v", err)
		}
		t.Fatal(err)
	}
}

// TestCloseAfterChdirRemovesTheRedoLog checks Close's promise
// (package doc, "# Redo log": "A clean close removes the log"; Close: "It
// is safe to call twice" and returns no error on a healthy store) for a
// store opened with a relative Config.Path, which New accepts. SQLite makes
// the path absolute when it opens the file, but the store keeps the
// relative spelling for its own files (the redo log, the WAL it fsyncs):
// after the process changes its working directory, the clean Close of a
// healthy store fails ("remove runtime.sqlite3-redo: no such file") and
// leaves the log behind, and the WAL syncs before rewinds and at close hit
// a missing file and are skipped.
func TestCloseAfterChdirRemovesTheRedoLog(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	t.Chdir(dir)
	s, err := New(ctx, Config{Path: "runtime.sqlite3", IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	t.Chdir(t.TempDir()) // the process moves on (a tool, a library, a daemon's chdir)
	r := redoRun(strings.Repeat("c", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	commitSteps(t, s, r, durable.RunCompleted, false, "b")
	if err := s.Close(); err != nil {
		t.Fatalf("Close of a healthy store opened with a relative path, after a chdir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "runtime.sqlite3"+redoSuffix)); err == nil {
		t.Fatal("a clean close left the redo log behind")
	}
}

// TestCacheStaysWithinCacheBytes checks Config.CacheBytes ("bounds
// the memory cache of a store that owns its file") and hotCache's comment
// ("It is bounded by the JSON size of what it holds, least recently used
// runs going first"; entryOverhead: "so that entries holding only a last
// seq are bounded too"). hotCache.ledgerDeleted and hotCache.advanced add
// an entry (entryOverhead each) without evicting, so a run of
// LedgerDeletes, or of appends to ledgers the cache does not hold, grows
// the cache past its bound by one entry per run, for as long as nothing
// else puts into it.
func TestCacheStaysWithinCacheBytes(t *testing.T) {
	const runs = 400
	const limit = 4096 // room for some 30 bare entries
	check := func(t *testing.T, s *Store, what string) {
		t.Helper()
		s.redo.mu.Lock()
		size, n := s.cache.size, len(s.cache.runs)
		s.redo.mu.Unlock()
		if size > limit {
			t.Fatalf("after %s: cache counts %d bytes in %d entries, over CacheBytes %d", what, size, n, limit)
		}
	}
	t.Run("LedgerDelete", func(t *testing.T) {
		ctx := t.Context()
		s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "c.sqlite3"), CacheBytes: limit, IdleCheckpoint: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		for i := range runs {
			if _, err := s.LedgerDelete(ctx, fmt.Sprintf("old-run-%04d", i)); err != nil {
				t.Fatal(err)
			}
		}
		check(t, s, fmt.Sprintf("%d LedgerDeletes", runs))
	})
	t.Run("LedgerAppend", func(t *testing.T) {
		ctx := t.Context()
		s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "c.sqlite3"), CacheBytes: limit, IdleCheckpoint: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		id := func(i int) string { return fmt.Sprintf("old-run-%04d", i) }
		rec := func(i int) []*durable.StepRecord {
			return []*durable.StepRecord{{RunID: id(i), StepID: "s", Status: durable.StepCompleted}}
		}
		for i := range runs { // each ledger starts at seq 1 and is soon evicted
			if err := s.LedgerAppend(ctx, id(i), rec(i)); err != nil {
				t.Fatal(err)
			}
		}
		check(t, s, "the first appends")
		for i := range runs / 2 { // the oldest, long evicted: their second record
			if err := s.LedgerAppend(ctx, id(i), rec(i)); err != nil {
				t.Fatal(err)
			}
		}
		check(t, s, fmt.Sprintf("%d appends to ledgers the cache had let go", runs/2))
	})
}
