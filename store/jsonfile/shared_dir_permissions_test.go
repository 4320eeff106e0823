package jsonfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// envChildOpen names a data directory a copy of the test binary opens
// (as another user) in init, reporting on stdout what it found.
const envChildOpen = "JSONFILE_TEST_CHILD_OPEN"

func init() {
	dir := os.Getenv(envChildOpen)
	if dir == "" {
		return
	}
	if os.Getenv(envChildMode) == "commit" {
		childCommits(dir)
	}
	s, err := New(Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	switch {
	case errors.Is(err, ErrDirInUse):
		fmt.Println("in use")
		os.Exit(0)
	case err != nil:
		fmt.Printf("open failed: %v\n", err)
		os.Exit(0)
	}
	r, err := s.RunGet(context.Background(), "r1")
	if err != nil {
		fmt.Printf("get failed: %v\n", err)
		os.Exit(0)
	}
	fmt.Printf("opened, tag=%v\n", r.Vars["tag"])
	os.Exit(0)
}

const envChildMode = "JSONFILE_TEST_CHILD_MODE"

// childCommits opens dir and commits r1 (read first) twice,
// printing the outcome of each commit.
func childCommits(dir string) {
	s, err := New(Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Printf("open failed: %v\n", err)
		os.Exit(0)
	}
	defer os.Exit(0)
	defer s.Close()
	ctx := context.Background()
	r, err := s.RunGet(ctx, "r1")
	if err != nil {
		fmt.Printf("get failed: %v\n", err)
		return
	}
	for i := 1; i <= 2; i++ {
		r.Vars["tag"] = fmt.Sprint("commit ", i)
		err := s.RunCommit(ctx, &store.CommitParams{Run: r})
		fmt.Printf("commit %d: %v\n", i, err)
	}
}

// sharedDir returns a data directory under a directory every user
// may enter, removed at the end of the test.
func sharedDir(t *testing.T) (base, dir string) {
	t.Helper()
	base, err := os.MkdirTemp("", "jsonfile-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return base, filepath.Join(base, "data")
}

// openAsNobody opens dir in a copy of this binary run as the user
// nobody and returns what it printed (root only).
func openAsNobody(t *testing.T, base, dir string, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "child.test")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envChildOpen+"="+dir), env...)
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v: %s", err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// liveWriter opens dir, commits r1 twice (so that the store holds
// a spare file) and leaves the store open.
func liveWriter(t *testing.T, dir string) *Store {
	t.Helper()
	w, err := New(Config{Dir: dir, NoSync: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	ctx := t.Context()
	r := taggedRun("r1", "one")
	if err := w.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	r.Vars["tag"] = "two"
	if err := w.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
	if spares, _ := filepath.Glob(filepath.Join(dir, ".spare-*.tmp")); len(spares) == 0 {
		t.Fatal("precondition: the open store holds no spare file")
	}
	return w
}

// A data directory this process may not write to "is only read here"
// (lockDir opens it without the lock: "there is nothing to protect").
// But while the store that owns the directory is open it always holds a
// spare file (docs/compatibility.md: "while the store is open the
// directory holds one hidden .spare-<hex>.tmp file"), and a crash leaves
// it behind; NewRecycler then tries to remove it, which a reader without
// write access cannot, and New fails: a read-only open of the directory
// of a live (or crashed) store never works.
func TestReadOnlyOpenBesideASpare(t *testing.T) {
	base, dir := sharedDir(t)
	w := liveWriter(t, dir)
	if os.Geteuid() == 0 {
		// root writes anywhere: read as nobody, for whom data/ (0755,
		// root's) is read-only.
		if got := openAsNobody(t, base, dir); got != "opened, tag=two" {
			t.Fatalf("a read-only open of the directory of a live store: %q; want it opened (tag=two)", got)
		}
		return
	}
	// Not root: a crashed store's leftover spare, in a directory made
	// read-only.
	_ = w.Close()
	if err := os.WriteFile(filepath.Join(dir, ".spare-0123456789abcdef.tmp"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	ro, err := New(Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("a read-only open of the directory failed: %v", err)
	}
	_ = ro.Close()
}

// lockDir takes the directory lock only when it can open the lock file
// for writing; a permission error is read as "a directory this process
// cannot write to". But the lock file is created 0644 by whoever opened
// the directory first, so a second process of another user who may write
// the directory (a group-shared data dir, 2775 with umask 002) cannot open
// it read-write, opens the store without the lock while the first one
// runs, and writes the directory beside it: here it also removes the live
// store's spare file at open. flock needs no write access: the lock file
// opened read-only would do. Package doc: "a second store on the same
// directory, in this process or another, fails to open with ErrDirInUse".
func TestSecondWriterWithoutLockFileAccessIsRefused(t *testing.T) {
	base, dir := sharedDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // everyone may write it
		t.Fatal(err)
	}
	_ = liveWriter(t, dir)
	spares, _ := filepath.Glob(filepath.Join(dir, ".spare-*.tmp"))
	var got string
	if os.Geteuid() == 0 {
		got = openAsNobody(t, base, dir)
	} else {
		// The owner without the write bit stands for the other user.
		if err := os.Chmod(lockPath(dir), 0o444); err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
		switch {
		case errors.Is(err, ErrDirInUse):
			got = "in use"
		case err != nil:
			got = "open failed: " + err.Error()
		default:
			got = "opened"
			_ = s.Close()
		}
	}
	if got != "in use" {
		left, _ := filepath.Glob(filepath.Join(dir, ".spare-*.tmp"))
		t.Fatalf("a second store on a directory a live store holds: %q, want ErrDirInUse (the live store's spares before %d, after %d)",
			got, len(spares), len(left))
	}
}

// Replace exchanges the run file with a spare and keeps the displaced
// file as the next spare, which the next Replace (of any file) opens for
// writing. A run file this process may replace (its directory is
// writable) but not write to, such as one a Python gateway running as
// another user left in a shared data directory, or one made read-only,
// is exchanged fine; the commit after it then fails with "opening spare
// file: permission denied" although nothing is wrong with the run or the
// directory (the spare is only discarded after the failure). Python's
// temp file + rename, and atomicfile.Write, never write an existing file.
func TestSpareDisplacedFromAFileNotWritableIsDropped(t *testing.T) {
	base, dir := sharedDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // a shared directory
		t.Fatal(err)
	}
	// r1 as another process left it: a file this user may not write.
	w, err := New(Config{Dir: dir, NoSync: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RunCommit(t.Context(), &store.CommitParams{Run: taggedRun("r1", "python"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got string
	if os.Geteuid() == 0 {
		// root writes any file: commit as nobody, to root's 0644 run file.
		if err := os.Remove(lockPath(dir)); err != nil {
			t.Fatal(err)
		}
		got = openAsNobody(t, base, dir, envChildMode+"=commit")
	} else {
		if err := os.Chmod(filepath.Join(dir, "run_r1.json"), 0o444); err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Dir: dir, NoSync: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := s.RunGet(t.Context(), "r1")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for i := 1; i <= 2; i++ {
			r.Vars["tag"] = fmt.Sprint("commit ", i)
			lines = append(lines, fmt.Sprintf("commit %d: %v", i, s.RunCommit(t.Context(), &store.CommitParams{Run: r})))
		}
		got = strings.Join(lines, "\n")
	}
	if want := "commit 1: <nil>\ncommit 2: <nil>"; got != want {
		t.Fatalf("two commits of a run whose file another user left:\n%s\nwant\n%s", got, want)
	}
}
