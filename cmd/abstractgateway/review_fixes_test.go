package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
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

const napParentFlow = `{"id":"parent","name":"parent","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"sub","type":"subflow","data":{"subflowId":"nap","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"done","type":"boolean"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"done","type":"boolean"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"done","target":"end","targetHandle":"done"}]}`

const napChildFlow = `{"id":"nap","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"wait","type":"wait_until","data":{"pinDefaults":{"duration":0.2},"inputs":[{"id":"exec-in","type":"execution"},{"id":"duration","type":"number"}],"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"e","type":"on_flow_end","data":{"pinDefaults":{"done":true},"inputs":[{"id":"exec-in","type":"execution"},{"id":"done","type":"boolean"}]}}],
 "edges":[{"source":"s","sourceHandle":"exec-out","target":"wait","targetHandle":"exec-in"},
 {"source":"wait","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"}]}`

// bundle run promises to sleep through wait_until waits, but when the
// wait_until was inside a subflow the driver only handled a child waiting
// for the user: it gave up and exited 3 "still waiting" with a run that
// would complete in 0.2 s.
func TestBundleRunSleepsThroughASubflowsTimer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"parent.json": napParentFlow, "nap.json": napChildFlow} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flow := filepath.Join(dir, "parent@1.0.0.flow")
	if code, out, errOut := call(t, "pack", "-o", flow, "-version", "1.0.0", filepath.Join(src, "parent.json")); code != 0 {
		t.Fatalf("pack: %d %s %s", code, out, errOut)
	}
	code, out, errOut := call(t, "run", flow)
	if code != 0 || !strings.Contains(out, `"status": "completed"`) {
		t.Fatalf("bundle run of a subflow with a 0.2s wait_until: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// bench: --ceiling-seconds accepted NaN and Inf (the check was only
// "< 0"); the ceiling lines then carried "seconds": NaN/+Inf, which json
// cannot encode, so the command failed only after the whole benchmark ran.
func TestBenchRejectsNonFiniteCeilingSeconds(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"NaN", "Inf"} {
		var stderr bytes.Buffer
		if _, code := parseBenchFlags([]string{"--ceiling-seconds", v}, io.Discard, &stderr); code != 2 {
			t.Errorf("--ceiling-seconds %s: parse code %d, want 2 (usage error)", v, code)
		}
	}
}
