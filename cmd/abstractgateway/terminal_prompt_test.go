package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Without the fix, stdin redirected from /dev/null (cron, systemd, nohup,
// `</dev/null`) is taken for a terminal (isTerminal only checks
// ModeCharDevice): the command prints an interactive "> " prompt, reads EOF
// and exits 3 without the documented "(no --answer left and stdin is not a
// terminal)" explanation.
func TestCLI_DevNullStdinIsNotATerminal(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	code, _, errOut := cliRun(t, devnull, path)
	if code != exitWaiting {
		t.Fatalf("exit %d, want %d", code, exitWaiting)
	}
	if !strings.Contains(errOut, "stdin is not a terminal") {
		t.Errorf("stdin=/dev/null was treated as a terminal (prompted and read EOF) instead of saying no answer is left:\n%q", errOut)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the prompt")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkPromptExit cancels ctx (what SIGINT/SIGTERM do through
// signal.NotifyContext in main) while the command waits at a terminal
// prompt, and requires the command to return promptly.
func checkPromptExit(t *testing.T, cancel context.CancelFunc, pw *io.PipeWriter, done <-chan struct{}) {
	t.Helper()
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = pw.Close() // unblock the read so the goroutine ends
		<-done
		t.Fatal("the command kept blocking on stdin for 2s after the context was cancelled (Ctrl-C / SIGTERM): the process does not exit until the user presses Enter")
	}
}

// example: the terminal prompt ignored ctx (a plain ReadString), and
// main's NotifyContext swallows SIGINT/SIGTERM: Ctrl-C did not exit.
func TestExamplePromptEndsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt, _ := exampleRuntime(t, ctx)
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuf
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = exampleRun(ctx, rt, "", pr, &out)
	}()
	waitFor(t, func() bool { return strings.Contains(out.String(), "Ship the order?") })
	checkPromptExit(t, cancel, pw, done)
}

// bundle run: the interactive answer ignored ctx the same way.
func TestBundleRunPromptEndsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := packGreet(t, t.TempDir())
	b, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{ReactPlaceholders: true})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := openDataStore(ctx, "", storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	arts, err := artifact.NewFS(ds.dir)
	if err != nil {
		t.Fatal(err)
	}
	obs := observe.Wrap(ds.st)
	follow := obs.Subscribe("", 4096)
	defer follow.Cancel()
	reg, _ := runtime.NewRegistry()
	if err := cb.Register(reg); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: obs, Registry: reg, Artifacts: arts, MaxSteps: 10000})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuf
	d := &bundleDriver{rt: rt, follow: follow, in: bufio.NewReader(pr), interactive: true, out: &out}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = d.run(ctx, bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, "greet"), map[string]any{})
	}()
	waitFor(t, func() bool { return strings.Contains(out.String(), "? Mood?") })
	checkPromptExit(t, cancel, pw, done)
}
