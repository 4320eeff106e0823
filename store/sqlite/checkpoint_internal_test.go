package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func commitRuns(t *testing.T, s *Store, n int) {
	t.Helper()
	commitRunsFrom(t, s, 0, n)
}

// commitRunsFrom creates runs first … first+n-1.
func commitRunsFrom(t *testing.T, s *Store, first, n int) {
	t.Helper()
	now := durable.NewTime(time.Now())
	for i := first; i < first+n; i++ {
		r := &durable.RunState{RunID: fmt.Sprintf("run-%d", i), WorkflowID: "wf", Status: durable.RunRunning,
			Vars: map[string]any{"i": i}, CreatedAt: now, UpdatedAt: now}
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// A store left quiet folds its WAL into the database: a copy of the
// database file alone then holds every run. The WAL file is kept and the
// next commits write over it from the start instead of growing it (a
// crash image then opens with every run); Close removes it, and a reopen
// finds every run.
func TestIdleCheckpoint_FoldsTheWALWhenQuiet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "db.sqlite")
	// No redo log: both rounds of commits must write the WAL alike, as
	// they reach it (the background apply groups them as it goes). The
	// idle time is long enough that a pause of a loaded machine within a
	// round does not fold part of it: a fold midway through the first
	// round leaves a WAL smaller than a whole round, which the second
	// round then grows.
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: time.Second, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	commitRuns(t, s, 50)
	// The list columns first (the idle checkpoint would bring them up to
	// date before it folds): the WAL then holds everything to fold.
	s.wsem <- struct{}{}
	err = s.flushLists(t.Context())
	<-s.wsem
	if err != nil {
		t.Fatal(err)
	}
	before := walSize(t, path)
	if before == 0 {
		t.Fatal("the commits left no WAL to fold")
	}
	// A pause in the commits on a loaded machine may already have folded
	// part of them, leaving its signal behind: a fold seen here is judged
	// by the copy, and a partial one waited past, up to 10 s in all.
	deadline := time.After(10 * time.Second)
	var rows []store.RunIndexRow
	for copies := 0; len(rows) != 50; copies++ {
		select {
		case <-s.ckpt.folded:
		case <-deadline:
			t.Fatalf("no idle checkpoint holding every run within 10 s of the last commit (the database file alone held %d runs)", len(rows))
		}
		// The checkpoint ran in the writer turn; taking the turn here
		// waits for nothing else to write while the file is copied.
		copyPath := filepath.Join(dir, fmt.Sprintf("copy%d.sqlite", copies))
		s.wsem <- struct{}{}
		copyFile(t, path, copyPath)
		<-s.wsem
		only, err := New(t.Context(), Config{Path: copyPath, IdleCheckpoint: -1})
		if err != nil {
			t.Fatal(err)
		}
		rows, err = only.RunIndex(t.Context(), &store.RunIndexParams{Limit: 100})
		if err != nil {
			t.Fatalf("the database file alone after the idle checkpoint: %v", err)
		}
		if err := only.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := walSize(t, path); n != before {
		t.Errorf("WAL is %d bytes after the idle checkpoint, want it kept at %d", n, before)
	}
	commitRunsFrom(t, s, 50, 50)
	if after := walSize(t, path); after > before {
		t.Errorf("WAL grew from %d to %d bytes for as many commits after the checkpoint; want it written over", before, after)
	}
	// What a process killed now leaves: the database and a WAL whose new
	// frames lie over the old ones. It opens with the 100 runs.
	copyCrashImage(t, s, path, filepath.Join(dir, "crash.sqlite"))
	crashed, err := New(t.Context(), Config{Path: filepath.Join(dir, "crash.sqlite"), IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	rows, err = crashed.RunIndex(t.Context(), &store.RunIndexParams{Limit: 200})
	if err != nil || len(rows) != 100 {
		t.Fatalf("a copy of the database and the written-over WAL: %d runs, %v; want 100", len(rows), err)
	}
	if err := crashed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := walSize(t, path); n != 0 {
		t.Errorf("WAL is %d bytes after Close, want it removed", n)
	}
	s2, err := New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	rows, err = s2.RunIndex(t.Context(), &store.RunIndexParams{Limit: 200})
	if err != nil || len(rows) != 100 {
		t.Fatalf("after a reopen: %d runs, %v; want 100", len(rows), err)
	}
}

// Checkpoints are SQLite's when the idle checkpointer is off, with
// synchronous FULL, and in a shared store.
func TestIdleCheckpoint_WhenItRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  Config
		runs bool
	}{
		{Config{}, true},
		{Config{IdleCheckpoint: -1}, false},
		{Config{Synchronous: "FULL"}, false},
		{Config{Shared: true}, false},
	} {
		tc.cfg.Path = filepath.Join(t.TempDir(), "db.sqlite")
		s, err := New(t.Context(), tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ckpt != nil; got != tc.runs {
			t.Errorf("%+v: idle checkpointer running = %v, want %v", tc.cfg, got, tc.runs)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Close right after a burst, with the checkpoint pending, returns and
// leaves no goroutine behind (goleak checks the package).
func TestIdleCheckpoint_CloseWhilePending(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	commitRuns(t, s, 10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.ckpt.done:
	default:
		t.Fatal("the checkpointer goroutine outlived Close")
	}
}

// The idle checkpointer waits for a whole period without a write: while
// commits go on, it does not fold the WAL (under the commits' feet); once
// they stop it brings the list columns up to date and folds it, and not
// again and again while the store stays quiet.
func TestIdleCheckpoint_OnlyWhenQuietAndOnce(t *testing.T) {
	t.Parallel()
	const idle = 250 * time.Millisecond
	s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db.sqlite"), IdleCheckpoint: idle, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Commits half a period or more apart (a loaded machine) may leave a
	// quiet period between them, where a fold is right: the check holds
	// only while every commit so far came quickly after the one before.
	slowest, last := time.Duration(0), time.Now()
	for i, end := 0, time.Now().Add(5*idle); time.Now().Before(end); i++ {
		commitRunsFrom(t, s, i, 1)
		slowest, last = max(slowest, time.Since(last)), time.Now()
		select {
		case <-s.ckpt.folded:
			if slowest < idle/2 {
				t.Fatalf("the WAL was folded while commits went on (commit %d, none more than %v after the one before)", i, slowest)
			}
		default:
		}
	}
	select {
	case <-s.ckpt.folded:
	case <-time.After(10 * idle):
		t.Fatal("no idle checkpoint once the commits stopped")
	}
	s.wsem <- struct{}{}
	dirty := s.listDirty
	<-s.wsem
	if dirty != 0 {
		t.Fatalf("%d runs' list columns left stale by the idle checkpoint, want them brought up to date first", dirty)
	}
	// The fold's own bringing the lists up to date counts as a write, which
	// may call for one more fold; then the store stays quiet.
	for again := 0; ; again++ {
		select {
		case <-s.ckpt.folded:
			if again == 2 {
				t.Fatal("the WAL is folded at every period of a quiet store")
			}
		case <-time.After(4 * idle):
			return
		}
	}
}
