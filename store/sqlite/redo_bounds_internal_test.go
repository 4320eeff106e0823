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

// With synchronous=FULL, openRedoFile creates the redo log, writes its
// first 5 MB with zeros and syncs them (preallocate), and only then writes
// the header (rewind). A process killed between the two (a few ms of
// writing and fsyncing 5 MB at every open that creates the log: after a
// clean close the log is removed, so every start creates it again) leaves
// a log of zeros; redoScan takes it for a damaged file ("not a redo log
// (bad magic)") and every later open fails, although the file holds
// nothing and the database everything. A kill at any point must leave a
// database that opens.
func TestRedoKillBetweenPreallocationAndHeader(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "full.sqlite3")
	cfg := Config{Path: path, Synchronous: "FULL", IdleCheckpoint: -1}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := redoRun(strings.Repeat("a", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "s1")
	if err := s.Close(); err != nil { // clean: the log is removed
		t.Fatal(err)
	}
	// The next start, killed inside openRedoFile: the file created and
	// preallocated (the code's own preallocate), the header not written yet.
	f, err := os.OpenFile(path+redoSuffix, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&redoFile{f: f, sync: true}).preallocate(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close() // killed here
	c, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("reopening after a kill between the redo log's preallocation and its header: %v", err)
	}
	defer c.Close()
	got, err := c.RunGet(ctx, r.RunID)
	if err != nil || got.Version != 1 {
		t.Fatalf("run after the reopen: %+v, %v", got, err)
	}
}

// The package doc: once the database holds the whole log and its WAL is
// synced, the log is rewound (at 4 MB). rewindWhenDue only rewinds when
// the queue is empty right after the goroutine's batch; under sustained
// commits from the cache (even one committer) the foreground queues more
// while each batch is applied, so the queue is never empty at that moment
// and the log is never rewound: it grew to ~580 MB in 4 s here, and a
// reopen after a kill reads all of it into memory (redoScan's
// os.ReadFile). The test commits ~120 MB from one goroutine and requires
// the log to have been rewound on the way (it stays far below that).
func TestRedoLogRewoundUnderSustainedCommits(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	pad := strings.Repeat("p", 2000)
	res := strings.Repeat("r", 1000)
	var maxOff int64
	for k := 0; k < 6000; k++ {
		r := redoRun(fmt.Sprintf("%032x", k+1))
		r.Vars = map[string]any{"pad": pad}
		if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true}); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			r.Vars["i"] = i
			rec := &durable.StepRecord{RunID: r.RunID, StepID: fmt.Sprint("s", i), Status: durable.StepCompleted, Result: res}
			if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, off := g.logPosition(); off > maxOff {
			maxOff = off
		}
	}
	base, off := g.logPosition()
	t.Logf("log: first LSN %d, %d MB now, %d MB at most", base, off>>20, maxOff>>20)
	if maxOff > 16*redoRewindBytes {
		t.Fatalf("the redo log reached %d MB under sustained commits (rewound at %d MB once the database holds it)",
			maxOff>>20, redoRewindBytes>>20)
	}
}

// TestRedoRecordAtTheLimitIsTaken: the bound on a record is inclusive: a
// payload of exactly maxPayload bytes is appended (and scanned back), one
// byte more is ErrTooLarge and leaves the file as it was.
func TestRedoRecordAtTheLimitIsTaken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db"+redoSuffix)
	r, err := openRedoFile(path, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	const limit = 100
	r.maxPayload = limit
	if lsn, err := r.append(make([]byte, limit)); err != nil || lsn != 1 {
		t.Fatalf("append of a %d-byte record under a %d-byte bound: LSN %d, %v", limit, limit, lsn, err)
	}
	if _, err := r.append(make([]byte, limit+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("append of %d bytes under a %d-byte bound: %v, want ErrTooLarge", limit+1, limit, err)
	}
	var sizes []int
	next, err := redoScan(path, func(_ int64, p []byte) error { sizes = append(sizes, len(p)); return nil })
	if err != nil || next != 2 || len(sizes) != 1 || sizes[0] != limit {
		t.Fatalf("scan: records of %v bytes, next LSN %d, %v; want one of %d, next 2", sizes, next, err, limit)
	}
}
