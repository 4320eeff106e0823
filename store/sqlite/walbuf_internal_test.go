package sqlite

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// copyFile copies src to dst; a missing src is skipped.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyCrashImage copies the database at path, its WAL and its redo log
// to dst, dst-wal and dst-redo in s's writer turn (and under the redo
// log's lock), so that nothing is written meanwhile: what a process
// killed at that moment leaves.
func copyCrashImage(t *testing.T, s *Store, path, dst string) {
	t.Helper()
	s.wsem <- struct{}{}
	defer func() { <-s.wsem }()
	if s.redo != nil {
		s.redo.mu.Lock()
		defer s.redo.mu.Unlock()
	}
	copyFile(t, path, dst)
	copyFile(t, path+"-wal", dst+"-wal")
	copyFile(t, path+redoSuffix, dst+redoSuffix)
}

// TestWALBatch_CommitsAreInTheFileWhenCommitReturns: an owned store
// gathers each commit's WAL writes, yet when RunCommit returns the commit
// is in the files: a copy of the database and its WAL taken right then
// (what a process killed at that moment leaves) opens with that commit.
// Transactions larger than one batch, and checkpoints that restart the
// WAL, are covered. It also checks that writes were gathered (batches of
// several writes) and that every commit frame was recognised, so no
// commit waited for the end-of-commit safety net.
func TestWALBatch_CommitsAreInTheFileWhenCommitReturns(t *testing.T) {
	ctx := t.Context()
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "owned.sqlite3")
			// No idle checkpoint: a copy must not race a background one. No
			// redo log: each commit must reach the WAL before it returns
			// (redo_internal_test.go covers the redo log's crash images).
			s, err := New(ctx, Config{Path: path, Synchronous: sync, CheckpointPages: 40, IdleCheckpoint: -1, NoRedoLog: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var gathered, flushes, late int64
			const commits = 40
			for i := range commits {
				id := fmt.Sprintf("run-%d", i%7)
				vars := map[string]any{"i": i, "pad": strings.Repeat("p", 100*i)}
				if i%13 == 12 {
					vars["big"] = strings.Repeat("b", walBatchMax+walBatchMax/2) // more than one batch
				}
				r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, Vars: vars}
				create := i < 7
				if !create {
					cur, err := s.RunGet(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					r.Version = cur.Version
				}
				rec := &durable.StepRecord{RunID: id, StepID: fmt.Sprint("s", i), Status: durable.StepCompleted, Result: i}
				g0, f0, l0 := walGathered.Load(), walFlushes.Load(), walLateFlushes.Load()
				if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: create, Records: []*durable.StepRecord{rec}}); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
				gathered += walGathered.Load() - g0
				flushes += walFlushes.Load() - f0
				late += walLateFlushes.Load() - l0
				want := r.Version

				snap := t.TempDir()
				copyCrashImage(t, s, path, filepath.Join(snap, "copy.sqlite3"))
				c, err := New(ctx, Config{Path: filepath.Join(snap, "copy.sqlite3"), CacheBytes: -1, IdleCheckpoint: -1})
				if err != nil {
					t.Fatalf("commit %d: opening the copy: %v", i, err)
				}
				got, err := c.RunGet(ctx, id)
				recs, lerr := c.LedgerList(ctx, &store.LedgerListParams{RunID: id})
				_ = c.Close()
				if err != nil || lerr != nil {
					t.Fatalf("commit %d: reading the copy: %v, %v", i, err, lerr)
				}
				if got.Version != want || fmt.Sprint(got.Vars["i"]) != fmt.Sprint(i) {
					t.Fatalf("commit %d: the copy has version %d, i=%v; want version %d, i=%d", i, got.Version, got.Vars["i"], want, i)
				}
				if n := len(recs); n == 0 || recs[n-1].StepID != fmt.Sprint("s", i) {
					t.Fatalf("commit %d: the copy's ledger lacks the commit's record", i)
				}
			}
			if flushes == 0 || gathered < 4*flushes {
				t.Errorf("%d WAL writes handed to the file in %d writes: not batched", gathered, flushes)
			}
			if late != 0 {
				t.Errorf("%d commits left frames gathered until the commit's end", late)
			}
		})
	}
}

// TestWALBatch_UnbatchedStoresWriteDirectly: a shared store (other
// connections read the WAL) and one configured with UnbatchedWAL do not
// gather writes.
func TestWALBatch_UnbatchedStoresWriteDirectly(t *testing.T) {
	ctx := t.Context()
	for name, cfg := range map[string]Config{"shared": {Shared: true}, "unbatched": {UnbatchedWAL: true}} {
		cfg.Path = filepath.Join(t.TempDir(), name+".sqlite3")
		s, err := New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		gathered0 := walGathered.Load()
		r := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunRunning}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
		if n := walGathered.Load() - gathered0; n != 0 {
			t.Errorf("%s store gathered %d WAL writes", name, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// walPresyncs returns how many background syncs the WAL of s has had.
func walPresyncs(t *testing.T, s *Store) int64 {
	t.Helper()
	var seq int
	var schema, file string
	if err := s.wconn.QueryRowContext(t.Context(), "PRAGMA database_list").Scan(&seq, &schema, &file); err != nil {
		t.Fatal(err)
	}
	wrapMu.Lock()
	defer wrapMu.Unlock()
	m := mainByName[file]
	if m == nil {
		t.Fatalf("%s is not open through the WAL-batching VFS", file)
	}
	return m.presyncCount.Load()
}

// TestWALPresync: an owned NORMAL store syncs its WAL in the background
// once the WAL holds half the pages at which commits fold it, and not
// before; FULL and OFF stores never do. Every
// commit survives a reopen either way.
func TestWALPresync(t *testing.T) {
	ctx := t.Context()
	big := strings.Repeat("x", 6000) // a two-page run row: several frames per commit
	for _, tc := range []struct {
		sync    string
		commits int
		want    bool
	}{
		{"NORMAL", 20, false}, // ~40 frames: below half of 400 pages
		{"NORMAL", 300, true}, // ~600 frames: past half, folded at 400
		{"FULL", 300, false},  // every commit syncs the WAL
		{"OFF", 300, false},   // the user asked for no syncs
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.sync, tc.commits), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "presync.sqlite3")
			s, err := New(ctx, Config{Path: path, Synchronous: tc.sync, CheckpointPages: 400, IdleCheckpoint: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.commits {
				r := &durable.RunState{RunID: fmt.Sprintf("run-%03d", i), WorkflowID: "wf", Status: durable.RunRunning,
					CurrentNode: "n", Vars: map[string]any{"big": big}}
				if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
					t.Fatal(err)
				}
			}
			n := walPresyncs(t, s)
			if got := n > 0; got != tc.want {
				t.Errorf("%d background syncs after %d commits; want any: %v", n, tc.commits, tc.want)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = New(ctx, Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rows, err := s.RunIndex(ctx, &store.RunIndexParams{Limit: 500})
			if err != nil || len(rows) != tc.commits {
				t.Fatalf("after reopening: %d runs, %v; want %d", len(rows), err, tc.commits)
			}
		})
	}
}
