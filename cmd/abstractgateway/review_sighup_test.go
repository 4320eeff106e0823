package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startWaitingBundleRun runs `bundle run` of a flow whose subflow sleeps a
// minute, as a real process with $TMPDIR set to tmp, and returns once it
// sleeps; wait waits for its end and returns its status and stderr.
func startWaitingBundleRun(t *testing.T, tmp string) (cmd *exec.Cmd, wait func() (*os.ProcessState, string)) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := packMinuteNap(t)
	cmd = exec.Command(exe, "bundle", "run", path)
	cmd.Env = append(os.Environ(), commandExecEnv+"=1", "TMPDIR="+tmp)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var printed strings.Builder
	waiting := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			mu.Lock()
			printed.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "waiting until") {
				once.Do(func() { close(waiting) })
			}
		}
	}()
	wait = func() (*os.ProcessState, string) {
		<-done
		_ = cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		return cmd.ProcessState, printed.String()
	}
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_, out := wait()
		t.Fatalf("the run never reached its wait:\n%s", out)
	}
	return cmd, wait
}

// Closing the terminal (or losing the SSH session) while bundle run waits
// at a prompt or sleeps through a wait_until sends SIGHUP, which the
// command did not handle: the process died at once, leaving its temporary
// data dir in $TMPDIR, the store unclosed and no word on how to continue
// the run. SIGHUP now interrupts it as SIGINT and SIGTERM do.
func TestReviewSIGHUPInterruptsLikeCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	tmp := t.TempDir()
	// The child must not inherit an ignored SIGHUP (the suite run under
	// nohup, as a CI script may be), which the command rightly keeps
	// ignoring: a signal this process catches is reset to its default in
	// a child it starts.
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGHUP)
	cmd, wait := startWaitingBundleRun(t, tmp)
	signal.Stop(caught)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	st, out := wait()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("bundle run was killed by %v instead of ending as interrupted\n%s", ws.Signal(), out)
	} else if st.ExitCode() != 1 || !strings.Contains(out, "interrupted") {
		t.Errorf("exit %d, want 1 and \"interrupted\"\n%s", st.ExitCode(), out)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "abstractgateway-*"))
	if len(left) > 0 {
		t.Errorf("temporary data dir left behind: %v", left)
	}
}

// Started under nohup (SIGHUP ignored), the command keeps ignoring it.
func TestReviewSIGHUPStaysIgnoredUnderNohup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	signal.Ignore(syscall.SIGHUP) // inherited by the child, as nohup does
	defer signal.Reset(syscall.SIGHUP)
	cmd, wait := startWaitingBundleRun(t, t.TempDir())
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	st, out := wait()
	if strings.Count(out, "interrupted") != 1 || st.ExitCode() != 1 {
		t.Errorf("under nohup a SIGHUP then a SIGINT: exit %d, want 1, interrupted by the SIGINT only\n%s", st.ExitCode(), out)
	}
}
