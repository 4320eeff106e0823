package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// failDirSyncs makes every directory sync of this package's writers fail
// until the test ends, and counts them. Tests using it are not parallel:
// the hook is package state.
func failDirSyncs(t *testing.T) *int {
	t.Helper()
	calls := 0
	real := syncDirectory
	t.Cleanup(func() { syncDirectory = real })
	syncDirectory = func(string) error { calls++; return errors.New("disk gone") }
	return &calls
}

// recyclerOverOld returns a syncing Recycler of a new directory and the
// path of a file there holding "old".
func recyclerOverOld(t *testing.T) (*Recycler, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewRecycler(dir, Options{SyncDir: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, path
}

func wantContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Fatalf("%s holds %q, %v; want %q", filepath.Base(path), b, err, want)
	}
}

func wantNoSpares(t *testing.T, r *Recycler) {
	t.Helper()
	left, err := Glob(r.dir, SparePattern)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	pooled := len(r.spares)
	r.mu.Unlock()
	if len(left) != 0 || pooled != 0 {
		t.Fatalf("spares on disk %v, in the pool %d; want none: the displaced content may come back under the path after a power loss and must never be written again", left, pooled)
	}
}

// A directory sync that fails after Write's rename reports ErrUnsynced,
// with the new content in place and no temp file left; with NoSync no
// directory sync is tried.
func TestWriteReportsAFailedDirectorySync(t *testing.T) {
	calls := failDirSyncs(t)
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), Options{SyncDir: true}); !errors.Is(err, ErrUnsynced) {
		t.Fatalf("Write with a failing directory sync = %v; want ErrUnsynced", err)
	}
	wantContent(t, path, "new")
	if tmps, _ := filepath.Glob(path + ".*.tmp"); len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
	*calls = 0
	if err := Write(path, []byte("newer"), Options{SyncDir: true, NoSync: true}); err != nil || *calls != 0 {
		t.Fatalf("Write with NoSync = %v after %d directory syncs; want nil after none", err, *calls)
	}
}

// A Replace whose exchange succeeded but whose directory sync failed
// reports ErrUnsynced with the new content in place, and never reuses the
// displaced file, which holds the old content.
func TestReplaceDropsTheDisplacedFileWhenTheSyncFails(t *testing.T) {
	r, path := recyclerOverOld(t)
	failDirSyncs(t)
	if err := r.Replace(path, []byte("new")); !errors.Is(err, ErrUnsynced) {
		t.Fatalf("Replace with a failing directory sync = %v; want ErrUnsynced", err)
	}
	if r.unsupported.Load() {
		t.Skip("no RENAME_EXCHANGE on this file system: Replace wrote the usual way")
	}
	wantContent(t, path, "new")
	wantNoSpares(t, r)
}

// Stage fails when the sync of the staged name fails, and leaves no file
// under that name (a later open would take it for a complete stage).
func TestStageLeavesNothingWhenTheSyncFails(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRecycler(dir, Options{SyncDir: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	failDirSyncs(t)
	if _, err := r.Stage("run.staged", []byte("new")); err == nil {
		t.Fatal("Stage with a failing directory sync succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "run.staged")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("staged file after the failed sync: %v; want none", err)
	}
}

// A Promote whose exchange succeeded but whose directory sync failed
// reports ErrUnsynced with the new content in place, nothing under the
// staged name, and the displaced file out of the spare pool.
func TestPromoteDropsTheDisplacedFileWhenTheSyncFails(t *testing.T) {
	r, path := recyclerOverOld(t)
	staged, err := r.Stage("f.staged", []byte("new"))
	if err != nil {
		t.Fatal(err)
	}
	failDirSyncs(t)
	if err := r.Promote(staged, path); !errors.Is(err, ErrUnsynced) {
		t.Fatalf("Promote with a failing directory sync = %v; want ErrUnsynced", err)
	}
	if r.unsupported.Load() {
		t.Skip("no RENAME_EXCHANGE on this file system: Promote renamed")
	}
	wantContent(t, path, "new")
	if _, err := os.Stat(staged); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("staged name after the failed sync: %v; want none", err)
	}
	wantNoSpares(t, r)
}
