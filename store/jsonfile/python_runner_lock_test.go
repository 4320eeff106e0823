//go:build unix

package jsonfile_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// envPythonRunnerLock names the data dir whose gateway_runner.lock the
// helper process locks, as a Python gateway runner does.
const envPythonRunnerLock = "JSONFILE_TEST_PYTHON_RUNNER_LOCK_DIR"

// TestHelperPythonRunnerLock is not a test: run as a child process with
// envPythonRunnerLock set, it takes gateway_runner.lock the way the
// Python gateway runner does (spec gateway-api §8.2: open in append mode,
// non-blocking exclusive flock, write "pid=<pid>", keep the descriptor
// for the runner's life), says "locked" and holds the lock until its
// stdin closes.
func TestHelperPythonRunnerLock(t *testing.T) {
	dir := os.Getenv(envPythonRunnerLock)
	if dir == "" {
		t.Skip("helper process only")
	}
	f, err := pythonRunnerLockFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "pid=%d\n", os.Getpid())
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin) // hold until the parent closes stdin
}

// pythonRunnerLockFile opens gateway_runner.lock as runner.py does.
func pythonRunnerLockFile(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "gateway_runner.lock"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
}

// A live Python gateway runner (another process holding
// gateway_runner.lock) applies the command inbox and ticks every RUNNING
// run of its data dir: a store opened beside it would have a second
// runtime tick the same runs, running their effects twice. New refuses
// the directory with ErrDirInUse naming that file, takes nothing, and
// opens once the runner is gone.
func TestOpenRefusedWhilePythonRunnerHoldsItsLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPythonRunnerLock$")
	cmd.Env = append(os.Environ(), envPythonRunnerLock+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = stdin.Close()
			_ = cmd.Wait()
		}
	}
	defer stop()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper did not take the runner lock: %q %v", line, err)
	}

	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err == nil {
		_ = s.Close()
		t.Fatal("New opened a data dir whose gateway_runner.lock a live (Python) gateway runner holds; want ErrDirInUse")
	}
	if !errors.Is(err, jsonfile.ErrDirInUse) || !strings.Contains(err.Error(), "gateway_runner.lock") {
		t.Fatalf("New: %v; want ErrDirInUse naming gateway_runner.lock", err)
	}
	// The failed open released the store's own lock: once the runner is
	// gone, the directory opens.
	stop()
	s, err = jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatalf("New after the runner stopped: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// The other side: a Python gateway runner started on a data dir the store
// has open tries a non-blocking exclusive flock of gateway_runner.lock and
// does not start when it fails (spec gateway-api §8.2). While the store
// is open that flock fails; after Close it succeeds. The store appends to
// the file as Python does (a "pid=<n>" line), never truncating what a
// runner wrote there (its mode: TestFilesFollowTheUmaskAsPythonsDo).
func TestPythonRunnerRefusedWhileStoreOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway_runner.lock")
	if err := os.WriteFile(path, []byte("pid=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// What runner.py does at start (an open file description of its own,
	// as in another process: flock conflicts between descriptions).
	f, err := pythonRunnerLockFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a Python gateway runner's flock of gateway_runner.lock while the store is open: %v, want EWOULDBLOCK", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("pid=1\npid=%d\n", os.Getpid()); string(data) != want {
		t.Fatalf("gateway_runner.lock holds %q, want %q", data, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("a Python gateway runner's flock after Close: %v", err)
	}
}
