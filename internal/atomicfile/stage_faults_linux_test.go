//go:build linux

package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// noFreeFDs makes every open of a new file descriptor fail (EMFILE),
// so that a directory sync fails while renames still work, and returns
// what undoes it. The test must not be parallel.
func noFreeFDs(t *testing.T) (undo func()) {
	t.Helper()
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	probe, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	lim := saved
	lim.Cur = uint64(probe) // the lowest free descriptor, once probe closes: refused
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var fillers []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fillers = append(fillers, fd)
	}
	_ = syscall.Close(probe)
	return func() {
		for _, fd := range fillers {
			_ = syscall.Close(fd)
		}
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved)
	}
}

// TestPromoteUnsyncedExchangeReportsErrUnsynced: when the exchange put
// the staged file in place but the directory sync failed, Promote's error
// wraps ErrUnsynced (callers keep what depends on the new content), the
// new content is at path, and the displaced file is not kept as a spare
// ("never written again": it may come back under path after a power loss).
func TestPromoteUnsyncedExchangeReportsErrUnsynced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, staged := stagedIn(t, dir, atomicfile.Options{SyncDir: true}, "new")
	undo := noFreeFDs(t)
	err := r.Promote(staged, path)
	undo()
	if !errors.Is(err, atomicfile.ErrUnsynced) {
		t.Fatalf("Promote with a failing directory sync: %v, want ErrUnsynced", err)
	}
	if got := readFile(t, path); got != "new" {
		t.Errorf("path holds %q, want the staged content", got)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"run.json"}) {
		t.Errorf("directory holds %v, want run.json alone (staged name consumed, displaced file not a spare)", got)
	}
}

// TestPromoteUnsyncedRenameReportsErrUnsynced: the same for a Promote
// onto a missing path (the rename branch): in place, error wraps
// ErrUnsynced.
func TestPromoteUnsyncedRenameReportsErrUnsynced(t *testing.T) {
	dir := t.TempDir()
	r, staged := stagedIn(t, dir, atomicfile.Options{SyncDir: true}, "data")
	path := filepath.Join(dir, "new.json")
	undo := noFreeFDs(t)
	err := r.Promote(staged, path)
	undo()
	if !errors.Is(err, atomicfile.ErrUnsynced) {
		t.Fatalf("Promote with a failing directory sync: %v, want ErrUnsynced", err)
	}
	if got := readFile(t, path); got != "data" {
		t.Errorf("path holds %q, want the staged content", got)
	}
}

// TestPromoteFailureLeavesStagedName: "On an error path is unchanged and
// the staged file is left under its name, for the caller to Unstage once
// it has undone what depends on it" (Promote), for an exchange that fails
// (a path under a regular file: ENOTDIR) and for a rename that fails (a
// path in a missing directory). The bug this guards against: the staged
// name was consumed, so the JSON store's undo of a failed terminal commit
// dropped it before cutting the records it guards.
func TestPromoteFailureLeavesStagedName(t *testing.T) {
	for _, c := range []struct{ name, rel string }{
		{"exchange fails", filepath.Join("file", "x.json")},
		{"rename fails", filepath.Join("missing", "x.json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "file"), []byte("f"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, staged := stagedIn(t, dir, atomicfile.Options{}, "data")
			if err := r.Promote(staged, filepath.Join(dir, c.rel)); err == nil {
				t.Fatal("Promote succeeded")
			}
			if got := readFile(t, staged); got != "data" {
				t.Errorf("the staged name holds %q after a failed Promote, want its data", got)
			}
			if got := readFile(t, filepath.Join(dir, "file")); got != "f" {
				t.Errorf("file holds %q", got)
			}
		})
	}
}
