package main

import (
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

// A parent whose subflow asks a question: the parent waits on the child
// (reason subworkflow), the child on the person.
const subflowParentFlow = `{"id":"subparent","name":"subparent","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"sub","type":"subflow","data":{"subflowId":"asker","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"mood","type":"string"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"mood","type":"string"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"mood","target":"end","targetHandle":"mood"}]}`

const subflowAskerFlow = `{"id":"asker","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"ask","type":"ask_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"Mood?"}}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"mood","type":"string"}]}}],
 "edges":[{"source":"s","sourceHandle":"exec-out","target":"ask","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"response","target":"e","targetHandle":"mood"}]}`

// The kernel resumes a parent when its child ends in a separate commit
// (driver.afterTerminal → resumeParent), so a kill (or a Ctrl-C: drain
// stops at a cancelled context) between the child's terminal commit and
// the parent's resume leaves the parent waiting on a child that has
// ended. `bundle run --run-id PARENT` is the documented way to continue
// such a run, but its driver gave up on an ended child, assuming "the
// kernel resumes its parent": it never called Runtime.NotifyChildEnded
// (as the scheduler's recovery does), exited 3 "still waiting" and
// printed a continue command that did the same again, forever.
func TestCLIContinueResumesParentOfEndedChild(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "subparent.json", map[string]string{
		"subparent.json": subflowParentFlow,
		"asker.json":     subflowAskerFlow,
	})
	data := t.TempDir()

	// 1. Run until the child's question: exit 3, parent waits on the child.
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data)
	if code != exitWaiting {
		t.Fatalf("first run: exit %d, want %d\n%s%s", code, exitWaiting, out, errOut)
	}
	parentID := cliResult(t, out)["run_id"].(string)

	// 2. The state a kill leaves between the child's terminal commit and
	// its parent's resume: the child completed, the parent still waiting.
	ctx := context.Background()
	st, err := sqlite.New(ctx, sqlite.Config{Path: data + "/" + sqliteFile})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := st.RunGet(ctx, parentID)
	if err != nil {
		t.Fatal(err)
	}
	childID := runtime.WaitedChild(parent)
	if childID == "" {
		t.Fatalf("parent %s does not wait on a child: %+v", parentID, parent.Waiting)
	}
	child, err := st.RunGet(ctx, childID)
	if err != nil {
		t.Fatal(err)
	}
	child.Status = durable.RunCompleted
	child.Waiting = nil
	child.Output = map[string]any{"mood": "fine", "success": true}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: child}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// 3. Continue the parent as the command says: it should complete.
	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", parentID)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("continuing parent %s whose child %s has completed: exit %d, status %v (want 0, completed)\nstderr:\n%s",
			parentID, childID, code, res["status"], errOut)
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

// Every other command refuses a flag it does not define (exit 2, "flag
// provided but not defined"), and the README says every command prints
// its help with -h; "version" ignored whatever followed it: `version -h`
// printed the version, `version --bogus` and `version stray` exited 0, so
// a typo in a script (`abstractgateway version --json`) passed unnoticed.
func TestCLIVersionRefusesUnknownArguments(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--bogus", "stray"} {
		var out, errb strings.Builder
		code := run(context.Background(), []string{"version", arg}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), strings.TrimLeft(arg, "-")) {
			t.Errorf("version %s: exit %d, stderr %q (want a usage error naming %q)", arg, code, errb.String(), arg)
		}
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
