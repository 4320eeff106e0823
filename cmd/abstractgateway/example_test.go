package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// The example run stops at its question when nobody answers, and a second
// invocation on the same data directory continues that same run.
func TestExampleContinuesWaitingRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	ctx := context.Background()
	invoke := func(answer string) string {
		st, err := sqlite.New(ctx, sqlite.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		reg, _ := runtime.NewRegistry(exampleWorkflow())
		rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg})
		var out bytes.Buffer
		if err := exampleRun(ctx, rt, answer, strings.NewReader(""), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	first := invoke("")
	if !strings.Contains(first, "started run") || !strings.Contains(first, "waits for an answer") {
		t.Fatalf("first invocation:\n%s", first)
	}
	second := invoke("yes")
	if !strings.Contains(second, "continuing run") || !strings.Contains(second, `completed: {"answer":"yes","shipped":true}`) {
		t.Fatalf("second invocation:\n%s", second)
	}
	runID := strings.Fields(first[strings.Index(first, "started run"):])[2]
	if !strings.Contains(second, runID) {
		t.Fatalf("second invocation did not continue run %s:\n%s", runID, second)
	}
}

// The example command's loop handles a run waiting for the person and a
// run waiting until a time; a run its host paused (Runtime.Pause: vars
// _runtime.control.paused, the wait kept, ticks return at once) matches
// the time case every round: the deadline had passed, the tick returned
// the same paused wait, and the loop went on without sleeping, at 100 %
// CPU, until killed. It now says the run is paused and stops, as bundle
// run does.
func TestCLIExampleDoesNotSpinOnAPausedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, st := exampleRuntime(t, ctx)
	// Stop at the question, answer it: the run waits in its half-second
	// pause; the host pauses it there.
	var out strings.Builder
	if err := exampleRun(ctx, rt, "", strings.NewReader(""), &out); err != nil {
		t.Fatal(err)
	}
	rows, err := st.RunIndex(ctx, &store.RunIndexParams{Status: durable.RunWaiting, WorkflowID: "example_order", Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("waiting run: %v %v", rows, err)
	}
	id := rows[0].RunID
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	run, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status == durable.RunRunning {
		if run, err = rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if run.Status != durable.RunWaiting || run.Waiting.Until.IsZero() {
		t.Fatalf("after the answer: %s %+v, want a wait until", run.Status, run.Waiting)
	}
	if _, err := rt.Pause(ctx, id, "maintenance"); err != nil {
		t.Fatal(err)
	}

	// The command run again on this store: it must come back (say the run
	// is paused, or fail), not spin until it is killed.
	runCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	err = exampleRun(runCtx, rt, "", strings.NewReader(""), io.Discard)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("example on a paused run looped for %v until its context ended (busy loop: the paused wait is never handled)", time.Since(start).Round(time.Millisecond))
	}
}

// exampleRuntime is a runtime for the example workflow on a SQLite store
// in a temporary directory, closed when the test ends.
func exampleRuntime(t *testing.T, ctx context.Context) (*runtime.Runtime, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), sqliteFile)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg, _ := runtime.NewRegistry(exampleWorkflow())
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

// TestExampleContinuesTheWaitingRunBeforeARunningOne: example continues
// "the run it left waiting" (its usage); a data dir that also holds a
// running example run must not make it switch to that one.
func TestExampleContinuesTheWaitingRunBeforeARunningOne(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	rt, st := exampleRuntimeIn(t, ctx, data)
	waiting, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "example_order"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := rt.Tick(ctx, waiting, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatalf("setup: run %s after a tick: %v, %v", waiting, s, err)
	}
	running, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "example_order"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := rt.GetState(ctx, running); err != nil || s.Status != durable.RunRunning {
		t.Fatalf("setup: run %s after start: %v, %v", running, s, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"example", "--data-dir", data, "--answer", "yes"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "continuing run "+waiting+" (waiting)") || strings.Contains(out, running) ||
		!strings.Contains(out, "run "+waiting+" completed") {
		t.Fatalf("want the waiting run %s continued and completed, not the running %s:\n%s", waiting, running, out)
	}
}
