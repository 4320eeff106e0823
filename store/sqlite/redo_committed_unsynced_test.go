package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestFullCommitThatStandsDespiteFailedSyncsIsWhatReadsSee: with
// synchronous=FULL, a write that goes through the database (here a
// RunCommit of a run whose state the cache holds from a read but whose
// last ledger seq it does not know) commits its SQLite transaction, then
// appends its redo record; when that append fails (a failing disk: its
// fdatasync returns EIO) and the fallback sync of the WAL fails too,
// RunCommit returns "a write committed but not synced". The database
// now holds version 2 (completed), and the next open shows it. A failing
// disk makes both syncs fail together, so this is the likely case, not a
// double fault. Reads in this process must agree with what the database
// holds: RunGet (from the cache) must answer version 2, not the version
// 1 it cached before, and RunList by status (which reads the list
// columns) must list the run, its stale-list record kept. The cache and
// the list bookkeeping follow the transaction whenever it committed,
// whatever the redo log did after; the error still reaches the caller.
func TestFullCommitThatStandsDespiteFailedSyncsIsWhatReadsSee(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on fsync of /dev/null failing")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "full.sqlite3")
	s, err := New(ctx, Config{Path: path, Synchronous: "FULL", IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := redoRun(strings.Repeat("d", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = New(ctx, Config{Path: path, Synchronous: "FULL", IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	// A read caches the state (not the last seq): the next commit of the
	// run goes through the database.
	got, err := s.RunGet(ctx, r.RunID)
	if err != nil || got.Version != 1 {
		t.Fatalf("RunGet: %v, %v", got, err)
	}
	s.redo.mu.Lock()
	s.redo.file.syncData = func(*os.File) error { return errors.New("input/output error") }
	s.redo.walPath = os.DevNull // fsync(2) of /dev/null fails (EINVAL), as a failing disk's would
	s.redo.mu.Unlock()

	got.Status = durable.RunCompleted
	commitErr := s.RunCommit(ctx, &store.CommitParams{Run: got,
		Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "b", Status: durable.StepCompleted}}})
	if commitErr == nil {
		t.Skip("the commit succeeded: the failure injection did not take")
	}
	t.Logf("RunCommit: %v", commitErr)

	var dbVersion int64
	var dbStatus string
	s.wsem <- struct{}{}
	err = s.wconn.QueryRowContext(ctx, "SELECT version, status FROM runs WHERE run_id = ?", r.RunID).Scan(&dbVersion, &dbStatus)
	<-s.wsem
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.RunGet(ctx, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if now.Version != dbVersion || string(now.Status) != dbStatus {
		t.Errorf("after a commit reported failed but committed in the database: RunGet answers version %d (%s) from the cache, "+
			"the database holds version %d (%s); RunList(status=completed) lists %d run(s); the next open will show version %d",
			now.Version, now.Status, dbVersion, dbStatus, len(listed), dbVersion)
	}
	if dbStatus == string(durable.RunCompleted) && len(listed) != 1 {
		// The failed transaction's list mark was dropped (settleListMarks
		// with committed=false) though the transaction committed: the
		// list columns are not brought up to date before the list reads.
		t.Errorf("RunList(status=completed) lists %d runs; the database holds the run as completed", len(listed))
	}
}
