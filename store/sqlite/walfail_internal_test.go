package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// openWALOf returns the open WAL of the database at path, failing the test
// when the database has none open through the WAL-batching VFS.
func openWALOf(t *testing.T, path string) *walFile {
	t.Helper()
	wrapMu.Lock()
	m := mainByName[path]
	wrapMu.Unlock()
	if m == nil || m.wal.Load() == nil {
		t.Fatalf("%s has no WAL open through the WAL-batching VFS", path)
	}
	return m.wal.Load()
}

// walUnsynced returns the bytes written to the WAL of the database at
// path since SQLite last synced it (walbuf.go's count).
func walUnsynced(t *testing.T, path string) int64 {
	t.Helper()
	w := openWALOf(t, path)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unsynced
}

// TestFullWriteWhoseRedoRecordFailsIsSynced: with synchronous=FULL and a
// redo log, the database runs with NORMAL and the redo log's fdatasync is
// what makes a write durable. A write that goes through the database
// (recordedTx: here a command append) commits to the WAL without a sync,
// then writes its redo record; when that fails, the write was
// acknowledged with nothing synced. Now the WAL is synced instead (or the
// write reports that it is not durable).
func TestFullWriteWhoseRedoRecordFailsIsSynced(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "full.sqlite3")
	s, err := New(ctx, Config{Path: path, Synchronous: "FULL", IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if s.redo == nil || !s.redo.file.sync {
		t.Fatal("want a redo log synced at each append")
	}
	var dbSync int
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&dbSync); err != nil {
		t.Fatal(err)
	}
	if dbSync != 1 {
		t.Fatalf("database synchronous = %d, want 1 (NORMAL) behind the FULL redo log", dbSync)
	}
	// The WAL's unsynced byte count before and after the command shows its
	// frames were written and not synced (walSync resets the count).
	r := redoRun(strings.Repeat("c", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	before := walUnsynced(t, path)

	synced := false
	s.redo.mu.Lock()
	_ = s.redo.file.f.Close() // the next redo append (write or fdatasync) fails
	s.redo.walSyncedForTest = func() { synced = true }
	s.redo.mu.Unlock()

	res, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: r.RunID, Type: "pause"})
	after := walUnsynced(t, path)
	if err == nil && !synced {
		t.Fatalf("CommandAppend acknowledged (seq %d) with synchronous=FULL although its redo record was not "+
			"written and the WAL was not synced (%d bytes unsynced before, %d after)", res.Seq, before, after)
	}
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: r.RunID, Type: "resume"}); err == nil {
		t.Fatal("a write after the redo log failed was accepted")
	}
}

// The WAL write failure injection: failWALWrites makes the next writes to
// a WAL whose methods were swapped by failNextWALWrites fail with
// SQLITE_IOERR_WRITE (as a full disk does); later ones go to the file.
var (
	failWALTable  sqlite3.Tsqlite3_io_methods // package memory: SQLite keeps its address
	origWALWrite  uintptr
	failWALWrites atomic.Int32
)

func failingWALWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	if failWALWrites.Add(-1) >= 0 {
		return sqlite3.SQLITE_IOERR_WRITE
	}
	return fn[fnFileIO](origWALWrite)(tls, pFile, zBuf, iAmt, iOfst)
}

// failNextWALWrites makes the next n writes the WAL-batching VFS hands to
// the WAL file of the database at path fail.
func failNextWALWrites(t *testing.T, path string, n int32) {
	t.Helper()
	w := openWALOf(t, path)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.orig != &failWALTable {
		failWALTable = *w.orig
		origWALWrite = w.orig.FxWrite
		setFn[fnFileIO](&failWALTable.FxWrite, failingWALWrite)
		w.orig = &failWALTable
	}
	failWALWrites.Store(n)
}

// walKept returns how many bytes the WAL-batching VFS holds gathered for
// the WAL of the database at path.
func walKept(t *testing.T, path string) int {
	t.Helper()
	w := openWALOf(t, path)
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.buf)
}

// TestFailedWALWriteIsNotResurrected: when the one write of a commit's
// gathered frames fails (a full disk), SQLite fails and rolls back the
// transaction. walbuf used to keep the frames gathered for a retry, and
// the next operation on the WAL (here the idle checkpoint, whose sync
// flushes them) wrote them after the WAL's last commit, where their salt
// and checksums made them a valid transaction: a process killed then
// reopened with a write that was reported as failed. Without a redo log
// the write is a RunCommit; with one (the default), a write that goes
// through the database, such as a command append.
func TestFailedWALWriteIsNotResurrected(t *testing.T) {
	for _, redo := range []bool{false, true} {
		t.Run(fmt.Sprint("redo=", redo), func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "walfail.sqlite3")
			// An idle checkpointer that never fires by itself: the test runs
			// its checkpoint (checkpointNow) at a chosen moment.
			s, err := New(ctx, Config{Path: path, IdleCheckpoint: time.Hour, NoRedoLog: !redo})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			r := redoRun(strings.Repeat("w", 32))
			commitSteps(t, s, r, durable.RunRunning, true, "a") // version 1
			// A list read brings the list columns up to date, so that the
			// checkpoint below has no list flush to write first.
			if _, err := s.RunList(ctx, &store.RunListParams{}); err != nil {
				t.Fatal(err)
			}

			failNextWALWrites(t, path, 1)
			if !redo {
				failed := *r
				failed.Vars = map[string]any{"lost": "never committed"}
				err = s.RunCommit(ctx, &store.CommitParams{Run: &failed,
					Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "b", Status: durable.StepCompleted}}})
			} else {
				_, err = s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: r.RunID, Type: "pause"})
			}
			if err == nil {
				t.Fatal("the write whose WAL write failed succeeded; the injection did not work")
			}
			if n := walKept(t, path); n != 0 {
				t.Errorf("%d bytes of the failed transaction kept gathered", n)
			}
			if got, err := s.RunGet(ctx, r.RunID); err != nil || got.Version != 1 {
				t.Fatalf("after the failed commit the store reads %+v, %v; want version 1", got, err)
			}

			s.checkpointNow(ctx) // what a store quiet for IdleCheckpoint runs
			if n, err := s.CommandLastSeq(ctx); err != nil || n != 0 {
				t.Fatalf("after the failed write the store has %d commands, %v; want 0", n, err)
			}
			got, steps, cmds := crashImageState(t, s, path, Config{CacheBytes: -1}, r.RunID)
			if got.Version != 1 || got.Vars["lost"] != nil || steps != "1:a " || cmds != 0 {
				t.Fatalf("after a kill, the database reopens with run version %d, vars %v, ledger %q, %d commands: "+
					"the write that failed (and was rolled back) is there; want version 1, ledger \"1:a \", 0 commands",
					got.Version, got.Vars, steps, cmds)
			}
		})
	}
}

// TestFailedWALWriteLosesNoLaterCommit: the same kept frames, with a redo
// log. The failed write (a command append through the database) had set
// redo_applied to the LSN it would have taken; it took none, so the next
// commit from the cache is logged under that same LSN. Once the kept
// frames were written out, a killed process reopened with redo_applied at
// that LSN and skipped the accepted commit's record: it was lost, and the
// failed command was there instead.
func TestFailedWALWriteLosesNoLaterCommit(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "walfail.sqlite3")
	s, err := New(ctx, Config{Path: path, IdleCheckpoint: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := redoRun(strings.Repeat("l", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a")               // version 1
	if _, err := s.RunList(ctx, &store.RunListParams{}); err != nil { // applies it, flushes the lists
		t.Fatal(err)
	}
	s.redo.heldForTest.Store(true) // the accepted commit below stays in the redo log only
	s.wsem <- struct{}{}           // and a pass that read the flag before is over
	<-s.wsem

	failNextWALWrites(t, path, 1)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: r.RunID, Type: "pause"}); err == nil {
		t.Fatal("the command append whose WAL write failed succeeded; the injection did not work")
	}
	if n := walKept(t, path); n != 0 {
		t.Errorf("%d bytes of the failed transaction kept gathered", n)
	}
	commitSteps(t, s, r, durable.RunCompleted, false, "b") // accepted: version 2
	s.checkpointNow(ctx)                                   // what a store quiet for IdleCheckpoint runs

	got, steps, cmds := crashImageState(t, s, path, Config{}, r.RunID)
	if got.Version != 2 || steps != "1:a 2:b " || cmds != 0 {
		t.Fatalf("after a kill the database reopens with run version %d, ledger %q and %d commands; "+
			"want the accepted commit (version 2, ledger \"1:a 2:b \") and not the failed command (0)",
			got.Version, steps, cmds)
	}
}

// crashImageState copies the files of the store s at path as a killed
// process leaves them, opens the copy with cfg, and returns run runID,
// its ledger's steps and the highest command seq.
func crashImageState(t *testing.T, s *Store, path string, cfg Config, runID string) (*durable.RunState, string, int64) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "img.sqlite3")
	copyCrashImage(t, s, path, img)
	cfg.Path = img
	c := openImage(t, cfg)
	got, err := c.RunGet(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := c.CommandLastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return got, ledgerSteps(t, c, runID), cmds
}
