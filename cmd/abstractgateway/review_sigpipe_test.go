package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command whose stdout is a pipe nobody reads any more (`bench | head`,
// `bundle run x.flow | true`, a consumer that died) was killed by SIGPIPE
// at its first write: Go kills a program writing to a broken pipe on fd 1
// unless SIGPIPE is ignored or notified. The deferred cleanups never ran:
// the temporary data dir of bundle run (and bench's temporary directory,
// with every store in it) stayed in $TMPDIR, the store was not closed, and
// the outWriter, which is there to report a failed write of the output
// ("a closed pipe must not end in exit 0"), never saw the error. The
// command must end by itself: exit 1 with the write error named, its
// temporary directory removed.
func TestReviewClosedStdoutPipeIsAnErrorNotAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := packGreet(t, t.TempDir())
	tmp := t.TempDir()

	cmd := exec.Command(exe, "bundle", "run", path, "--answer", "fine")
	cmd.Env = append(os.Environ(), commandExecEnv+"=1", "TMPDIR="+tmp)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close() // nobody reads: the first write to stdout fails with EPIPE
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	_ = w.Close()

	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("bundle run with a closed stdout was killed by %v instead of ending with an error\n%s", ws.Signal(), stderr.String())
		} else if ee.ExitCode() != 1 {
			t.Errorf("exit %d, want 1\n%s", ee.ExitCode(), stderr.String())
		}
	} else {
		t.Errorf("bundle run with a closed stdout: %v, want exit 1", err)
	}
	if !strings.Contains(stderr.String(), "writing the output") {
		t.Errorf("the failed write of the output is not reported:\n%s", stderr.String())
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "abstractgateway-*"))
	if len(left) > 0 {
		t.Errorf("temporary data dir left behind: %v", left)
	}
}

// With SIGPIPE ignored, a broken pipe must still stop the command, as it
// did when SIGPIPE killed it (and as Python's BrokenPipeError does): in
// `bundle run x.flow 2>&1 | head` the shell waits for the whole pipeline,
// so a run sleeping through a long wait_until after head has gone would
// hold the terminal for the length of the wait, printing to nobody. A
// failed write to stdout or stderr with EPIPE interrupts the command,
// which cleans up and exits 1.
func TestReviewBrokenStderrPipeStopsTheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := packMinuteNap(t)
	tmp := t.TempDir()
	cmd := exec.Command(exe, "bundle", "run", path)
	cmd.Env = append(os.Environ(), commandExecEnv+"=1", "TMPDIR="+tmp)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
		t.Fatal("bundle run with a broken stderr pipe went on sleeping through its 60 s wait instead of stopping")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("bundle run with a broken stderr pipe: %v, want exit 1", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "abstractgateway-*"))
	if len(left) > 0 {
		t.Errorf("temporary data dir left behind: %v", left)
	}
}
