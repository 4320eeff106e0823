//go:build unix

package jsonfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Close releases the directory's locks even while another descriptor of
// the same open file exists, as in a child forked (to run a command) that
// has not exec'd yet: a Python runner started right after Close starts.
// Closing the descriptor alone left the lock to the copy (a flaky
// refusal in CI when another test forked at that moment).
func TestCloseReleasesLocksHeldThroughACopiedDescriptor(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var copies []int
	for _, f := range s.locks {
		fd, err := syscall.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		copies = append(copies, fd)
	}
	defer func() {
		for _, fd := range copies {
			_ = syscall.Close(fd)
		}
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{lockPath(dir), runnerLockPath(dir)} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		_ = f.Close()
		if err != nil {
			t.Errorf("flock of %s after Close, a copy of the store's descriptor still open: %v", filepath.Base(path), err)
		}
	}
	// And a store opens the directory again at once.
	s, err = New(Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatalf("New after Close: %v", err)
	}
	_ = s.Close()
}
