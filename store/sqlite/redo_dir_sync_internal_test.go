package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestFullRedoLogDirectorySyncedAfterCreation is the in-process half of
// TestFullCommitRedoLogCreationSyncsItsDirectory, which needs a tracer
// that sees every thread of its child: a synchronous=FULL store syncs the
// directory of its redo log once the log exists and before it
// acknowledges a commit; a failed sync fails the open, naming it; a
// NORMAL store, whose commits a power cut may lose anyway, does not pay
// for the sync.
func TestFullRedoLogDirectorySyncedAfterCreation(t *testing.T) {
	ctx := context.Background()
	type call struct {
		dir        string
		redoExists bool
	}
	var calls []call
	real := syncRedoDir
	t.Cleanup(func() { syncRedoDir = real })
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "runtime.sqlite3")
	syncRedoDir = func(d string) error {
		_, err := os.Stat(path + redoSuffix)
		calls = append(calls, call{d, err == nil})
		return real(d)
	}

	s, err := New(ctx, Config{Path: path, Synchronous: "FULL"})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].dir != dir || !calls[0].redoExists {
		t.Fatalf("FULL open: directory syncs %+v, want one of %s after the redo log exists", calls, dir)
	}
	r := &durable.RunState{RunID: "0123456789abcdef0123456789abcdef", WorkflowID: "wf", Status: durable.RunRunning}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true,
		Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "s1", Status: durable.StepCompleted}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	calls = nil
	s, err = New(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 0 {
		t.Fatalf("NORMAL open synced the directory: %+v", calls)
	}

	syncRedoDir = func(string) error { return errors.New("disk gone") }
	if s, err := New(ctx, Config{Path: path, Synchronous: "FULL"}); err == nil {
		_ = s.Close()
		t.Fatal("FULL open succeeded although the redo log's directory could not be synced")
	} else if !strings.Contains(err.Error(), "redo log") || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("error %q does not name the redo log and the cause", err)
	}
}

// TestReplaySyncsTheWALBeforeTheLogGoes: a replay syncs the WAL it wrote
// while the redo log still holds the records it applied, so a power cut
// after the log is rewound cannot take the rebuilt transactions with it
// (the replay's own commits follow synchronous=NORMAL, which does not
// sync them). Not parallel: it swaps syncReplayedWAL.
func TestReplaySyncsTheWALBeforeTheLogGoes(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	g.hold()
	r := redoRun(strings.Repeat("e", 32))
	for i := range 2 {
		g.commit(r, i, i == 0)
	}
	var img string
	g.held(func() { img = g.image() })
	log := readFile(t, img+redoSuffix)

	type call struct {
		path    string
		logKept bool
	}
	var calls []call
	real := syncReplayedWAL
	t.Cleanup(func() { syncReplayedWAL = real })
	syncReplayedWAL = func(path string) error {
		now, err := os.ReadFile(img + redoSuffix)
		calls = append(calls, call{path, err == nil && string(now) == string(log)})
		return real(path)
	}
	openImage(t, Config{Path: img}) // replays the two commits
	if len(calls) != 1 || calls[0].path != img+"-wal" || !calls[0].logKept {
		t.Fatalf("WAL syncs during the replay: %+v; want one of %s while the redo log still held its records", calls, img+"-wal")
	}
}
