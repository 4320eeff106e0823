package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Without the fix, `bundle run FILE --data-dir D` stops at a question with
// exit 3 ("still waiting") and keeps the waiting run in D, but a second
// invocation on the same data dir never continues it: it starts a brand-new
// run (re-running every effect before the question) and the first run stays
// waiting forever. The example command on the same store continues its run;
// the README describes runs that "survive restarts and resume exactly where
// they stopped". Same after Ctrl-C at the prompt or during a wait_until.
//
// Adjusted to the owner's design: a second invocation does not pick a
// waiting run by itself (which one, of several, with which --input?); a
// new run starts, as before. Instead the command that leaves a run
// waiting (or is interrupted) prints the run id and the command that
// continues it, and --run-id continues that run: its question is answered
// and nothing it already did runs again. (Ctrl-C: see
// TestBundleRunInterruptedPrintsHowToContinue.)
func TestCLI_BundleRunContinuesTheWaitingRunOnTheSameDataDir(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data)
	if code != exitWaiting {
		t.Fatalf("first invocation without an answer: exit %d, want %d\n%s%s", code, exitWaiting, out, errOut)
	}
	first := cliResult(t, out)
	if first["status"] != "waiting" {
		t.Fatalf("first invocation: %s", out)
	}
	id, _ := first["run_id"].(string)
	if want := "abstractgateway bundle run " + path + " --data-dir " + data + " --run-id " + id; !strings.Contains(errOut, want) {
		t.Errorf("exit 3 left run %s waiting without printing the command that continues it (%s):\n%s", id, want, errOut)
	}

	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", id, "--answer", "happy")
	if code != 0 {
		t.Fatalf("second invocation with --run-id and --answer: exit %d\n%s%s", code, out, errOut)
	}
	second := cliResult(t, out)
	if second["run_id"] != id || second["status"] != "completed" {
		t.Errorf("second invocation with --run-id %s: run %v, status %v; want the waiting run completed\nstderr:\n%s",
			id, second["run_id"], second["status"], errOut)
	}
	if mood := second["output"].(map[string]any)["mood"]; mood != "happy" {
		t.Errorf("output mood = %v, want the --answer of the second invocation", mood)
	}

	// Nothing ran twice: each node of the run started once, and the data
	// dir holds that run and its one subflow run only.
	st, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(data, sqliteFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]int{}
	for _, r := range recs {
		if r.Status == durable.StepStarted {
			started[r.NodeID]++
		}
	}
	for node, n := range started {
		if n != 1 {
			t.Errorf("node %s of run %s started %d times, want once (ledger %v)", node, id, n, started)
		}
	}
	runs, err := st.RunIndex(context.Background(), &store.RunIndexParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("data dir holds %d runs, want 2 (the run and its subflow run): %+v", len(runs), runs)
	}
}

// TestBundleRunContinueCommandKeepsStoreAndInput: the command bundle run
// prints for a run it leaves waiting continues that run as is: it
// repeats --store (when not auto) and --input (a run created with
// --input needs the same --input to be continued).
func TestBundleRunContinueCommandKeepsStoreAndInput(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	input := `{"name": "bob"}`
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--store", "json", "--input", input)
	if code != exitWaiting {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitWaiting, out, errOut)
	}
	id, _ := cliResult(t, out)["run_id"].(string)
	want := shellCommand("abstractgateway", "bundle", "run", path, "--data-dir", data, "--store", "json", "--input", input, "--run-id", id)
	if !strings.Contains(errOut, want) {
		t.Fatalf("continue command missing, want %q in:\n%s", want, errOut)
	}
	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--store", "json", "--input", input,
		"--run-id", id, "--answer", "happy")
	res := cliResult(t, out)
	if code != 0 || res["run_id"] != id || res["output"].(map[string]any)["loud"] != "BOB" {
		t.Fatalf("the printed command did not continue run %s: exit %d\n%s%s", id, code, out, errOut)
	}
}

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
