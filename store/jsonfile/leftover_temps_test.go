package jsonfile_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// The store writes a new file (a run's run_<id>.json, a cursor, the
// command counter, a rewritten commands.jsonl) through a temp file
// <target>.<32 hex>.tmp and a rename (package doc, "Durability";
// internal/atomicfile.Write). A process killed between the temp's
// creation and the rename leaves the temp behind; the next open must
// remove it, as it removes leftover spares and staged commits, or a
// gateway killed now and then fills its directory with them. Python's
// stores (storage/json_files.py, storage/commands.py
// JsonFileCommandCursorStore.save and JsonlCommandStore.delete_by_run)
// name their temps the same way and take no lock, so a young temp may be
// a write of a live Python process: only temps older than a safety age
// are removed.

const hex32 = "0123456789abcdef0123456789abcdef"

// tempsDir returns a data directory holding runs r1 (running) and r2
// (completed), a saved cursor and a command.
func tempsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := durable.NewTime(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	for _, r := range []*durable.RunState{
		{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{"k": "one"}, CreatedAt: now, UpdatedAt: now},
		{RunID: "r2", WorkflowID: "wf", Status: durable.RunCompleted, CurrentNode: "b", Vars: map[string]any{"k": "two"}, CreatedAt: now, UpdatedAt: now},
	} {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(ctx, store.DefaultConsumer, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// leave creates a file as a write killed before its rename would leave
// it, with the given modification time.
func leave(t *testing.T, dir, name string, mtime time.Time) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(`{"cursor": 9`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkRunsIntact asserts that the runs and command state tempsDir made
// are all there.
func checkRunsIntact(t *testing.T, s *jsonfile.Store) {
	t.Helper()
	ctx := t.Context()
	for id, want := range map[string]string{"r1": "one", "r2": "two"} {
		r, err := s.RunGet(ctx, id)
		if err != nil || r == nil || r.Vars["k"] != want {
			t.Fatalf("RunGet(%s) = %+v, %v; want vars.k=%s", id, r, err, want)
		}
	}
	if runs, err := s.RunList(ctx, &store.RunListParams{Limit: 10}); err != nil || len(runs) != 2 {
		t.Fatalf("RunList = %d runs, %v; want 2", len(runs), err)
	}
	if n, err := s.CursorLoad(ctx, store.DefaultConsumer); err != nil || n != 1 {
		t.Fatalf("CursorLoad = %d, %v; want 1", n, err)
	}
	if n, err := s.CommandLastSeq(ctx); err != nil || n != 1 {
		t.Fatalf("CommandLastSeq = %d, %v; want 1", n, err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// TestOpenRemovesTempsOfKilledWrites: old temps of every file the store
// writes through a temp are gone after the next open, each removal is
// logged with its path, and the directory's runs are intact.
func TestOpenRemovesTempsOfKilledWrites(t *testing.T) {
	dir := tempsDir(t)
	old := time.Now().Add(-time.Hour)
	var left []string
	for _, target := range []string{
		"run_r1.json", // a save of an existing run (fallback path)
		"run_r9.json", // a new run killed before its rename
		"commands_cursor.json",
		"commands_cursor_worker-2.json",
		"commands_seq.json",
		"commands.jsonl", // CommandDeleteByRun's rewrite
	} {
		left = append(left, leave(t, dir, target+"."+hex32+".tmp", old))
	}
	// Another random suffix, as each write draws its own.
	left = append(left, leave(t, dir, "run_r2.json.f0e1d2c3b4a5968778695a4b3c2d1e0f.tmp", old))

	var logs storetest.LogBuffer
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s.Close()
	for _, p := range left {
		if exists(p) {
			t.Errorf("%s is still there after the reopen", filepath.Base(p))
		}
		if !strings.Contains(logs.String(), p) {
			t.Errorf("the removal of %s is not logged with its path; logs:\n%s", p, logs.String())
		}
	}
	checkRunsIntact(t, s)
	if r, err := s.RunGet(t.Context(), "r9"); err == nil && r != nil {
		t.Fatalf("the temp of a killed create became run r9: %+v", r)
	}
}

// TestOpenKeepsYoungTemps: a temp younger than the safety age may be the
// write of a live Python process on the directory (Python takes no lock
// and uses the same names): it is kept.
func TestOpenKeepsYoungTemps(t *testing.T) {
	dir := tempsDir(t)
	var kept []string
	for _, age := range []time.Duration{0, time.Minute, 5 * time.Minute} {
		kept = append(kept, leave(t, dir, "run_r1.json."+strings.Repeat(string("abc"[int(age/time.Minute)%3]), 32)+".tmp", time.Now().Add(-age)))
	}
	// A clock set back since (an mtime in the future) is not old either.
	kept = append(kept, leave(t, dir, "commands_cursor.json."+hex32+".tmp", time.Now().Add(time.Hour)))
	reopenKeeping(t, dir, kept)
}

// TestOpenKeepsFilesOfOtherShapes: only the exact temp names of the
// store's own targets are removed, however old; other .tmp files, the
// data files and a directory named like a temp are left alone.
func TestOpenKeepsFilesOfOtherShapes(t *testing.T) {
	dir := tempsDir(t)
	old := time.Now().Add(-24 * time.Hour)
	var kept []string
	for _, name := range []string{
		"run_r1.json.tmp",
		"run_r1.json." + hex32[:31] + ".tmp",
		"run_r1.json." + hex32 + "0.tmp",
		"run_r1.json.0123456789ABCDEF0123456789ABCDEF.tmp",
		"run_r1.json." + hex32 + ".tmp.bak",
		".run_r1.json." + hex32 + ".tmp", // hidden: not our naming
		"run_.json." + hex32 + ".tmp",    // no run id: not a run file of ours
		"ledger_r1.jsonl." + hex32 + ".tmp",
		"notes.txt." + hex32 + ".tmp",
		"commands_cursor.jsonx." + hex32 + ".tmp",
		"scratch.tmp",
	} {
		kept = append(kept, leave(t, dir, name, old))
	}
	sub := filepath.Join(dir, "run_r3.json."+hex32+".tmp")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(sub, old, old); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, sub)
	for _, name := range []string{"run_r1.json", "run_r2.json", "commands.jsonl", "commands_cursor.json", ".abstractgateway-store.lock", "gateway_runner.lock"} {
		kept = append(kept, filepath.Join(dir, name))
	}
	reopenKeeping(t, dir, kept)
}

// reopenKeeping reopens the store on dir and checks that every path of
// kept is still there and the runs are intact.
func reopenKeeping(t *testing.T, dir string, kept []string) {
	t.Helper()
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s.Close()
	for _, p := range kept {
		if !exists(p) {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	checkRunsIntact(t, s)
}
