package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// walBufCap returns the capacity of the gathering buffer of the WAL of the
// database at path (memory the file keeps for its life).
func walBufCap(t *testing.T, path string) int {
	t.Helper()
	w := openWALOf(t, path)
	w.mu.Lock()
	defer w.mu.Unlock()
	return cap(w.buf)
}

// TestWALBatchBufferIsBoundedByABigTransaction: a transaction larger than
// walBatchMax is written in pieces, so the buffer the WAL keeps for its
// life stays near walBatchMax. Were the bound ignored (or far larger),
// one big commit would pin megabytes per open store.
func TestWALBatchBufferIsBoundedByABigTransaction(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "big.sqlite3")
	s, err := New(ctx, Config{Path: path, IdleCheckpoint: -1, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := &durable.RunState{RunID: "big", WorkflowID: "wf", Status: durable.RunRunning,
		Vars: map[string]any{"big": strings.Repeat("b", 8*walBatchMax)}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	if c := walBufCap(t, path); c > 2*walBatchMax {
		t.Fatalf("after a %d-byte commit the WAL keeps a %d-byte buffer; want at most about walBatchMax (%d)",
			8*walBatchMax, c, walBatchMax)
	}
}

// TestWALSyncResetsTheUnsyncedCount: with synchronous=FULL (no redo log)
// every commit syncs the WAL, so nothing is left counted as unsynced when
// it returns. Were walSync not to reset the count, the presync step
// (walFile.presync) would be judged on bytes already on disk.
func TestWALSyncResetsTheUnsyncedCount(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "full.sqlite3")
	s, err := New(ctx, Config{Path: path, Synchronous: "FULL", IdleCheckpoint: -1, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for i := range 3 {
		r := &durable.RunState{RunID: fmt.Sprint("run-", i), WorkflowID: "wf", Status: durable.RunRunning}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
		if n := walUnsynced(t, path); n != 0 {
			t.Fatalf("commit %d: %d WAL bytes counted unsynced after a FULL commit synced the WAL", i, n)
		}
	}
}

// TestWALPresyncStepsByUnsyncedBytes: past the presync size, a background
// sync starts once per step of unsynced bytes, not after every commit.
// Each commit here waits for the background sync it may have started, so
// none is skipped for one still running. Were the count not reset when a
// presync starts (or the step ignored), every flush past the size would
// start one.
func TestWALPresyncStepsByUnsyncedBytes(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "presync.sqlite3")
	s, err := New(ctx, Config{Path: path, Synchronous: "NORMAL", CheckpointPages: 400, IdleCheckpoint: -1, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	big := strings.Repeat("x", 6000) // a two-page run row
	const commits = 300
	var flushed int64
	for i := range commits {
		r := &durable.RunState{RunID: fmt.Sprintf("run-%03d", i), WorkflowID: "wf", Status: durable.RunRunning,
			CurrentNode: "n", Vars: map[string]any{"big": big}}
		f0 := walFlushes.Load()
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
		flushed += walFlushes.Load() - f0
		s.wsem <- struct{}{} // the writer idle: no flush starts one meanwhile
		openWALOf(t, path).presyncs.Wait()
		<-s.wsem
	}
	from, step := openWALOf(t, path).presyncLimits()
	n := walPresyncs(t, s)
	// At most 6 frames per commit are written: the bound on background
	// syncs is what those bytes allow in steps, well under one per flush.
	const frame = 4096 + walFrameHeader // the store's page size
	most := commits*6*frame/step + 1
	if n == 0 || n > most {
		t.Fatalf("%d background syncs for %d flushes (presync from %d bytes, step %d); want 1..%d",
			n, flushed, from, step, most)
	}
}

// TestWALVFSForgetsAClosedDatabase: closing a store takes its database
// file out of the VFS's table of open files, so that the table does not
// grow with every database a process ever opened and a WAL or a presync
// setting is never tied to a file no longer open.
func TestWALVFSForgetsAClosedDatabase(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "closed.sqlite3")
	s, err := New(ctx, Config{Path: path, IdleCheckpoint: -1, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	commitSteps(t, s, redoRun("r"), durable.RunRunning, true, "a")
	w := openWALOf(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wrapMu.Lock()
	m := mainByName[path]
	wrapMu.Unlock()
	if m != nil {
		t.Fatalf("%s is still listed as open through the WAL-batching VFS after the store closed", path)
	}
	if setWALPresync(path, 1) {
		t.Fatal("setWALPresync reports a closed database as open")
	}
	if _, ok := openFiles.Load(w.file); ok {
		t.Fatal("the closed WAL is still in the table of open files")
	}
}
