package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// eventsFlow: the root emits "ping" (session scope) once and ends with
// the emit's delivered count; the same flow holds an on_event "ping"
// listener whose branch answers the user.
const eventsFlow = `{"id":"evmain","name":"evmain","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"emit","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}],"effectConfig":{"name":"ping","scope":"session"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 {"id":"heard","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"message":"listener heard ping"}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"emit","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},
 {"source":"listen","sourceHandle":"exec-out","target":"heard","targetHandle":"exec-in"}]}`

// visualflow.md §5.7 (Listener workflows): when a run of the root flow
// starts, the host starts one child run per on_event node (same session,
// parent_run_id = root) and ticks it to its first wait, so that the
// root's emit_event reaches it; Python's VisualSessionRunner does this and
// cancels the idle listeners when the root completes. bundle run compiled
// and registered the listener workflows but never started them: the
// root's event reached nobody and the on_event branch never ran.
func TestBundleRunStartsAndStopsListeners(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := packFlows(t, dir, "evmain.json", map[string]string{"evmain.json": eventsFlow})
	data := filepath.Join(dir, "data")
	output, root, errOut := bundleRunCompleted(t, path, data)
	if d, _ := output["delivered"].(float64); d != 1 {
		t.Errorf("the root's emit_event delivered %v, want 1 (the flow's on_event listener started with the root run)\n%v", output["delivered"], output)
	}
	if !strings.Contains(errOut, "-listener-0 #") || !strings.Contains(errOut, "heard") {
		t.Errorf("the on_event branch never ran (no record of node heard from the listener in the printed ledger):\n%s", errOut)
	}
	// The listener, waiting again after its branch, ends with the root.
	ctx := t.Context()
	ds, err := openDataStore(ctx, data, storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	l, err := ds.st.RunGet(ctx, root+"-listener-0")
	if err != nil {
		t.Fatalf("the listener run: %v", err)
	}
	if l.Status != durable.RunCancelled || l.ParentRunID != root || l.SessionID != root {
		t.Errorf("listener run: status %s (want cancelled: the root completed), parent %q, session %q (want the root's id for both)",
			l.Status, l.ParentRunID, l.SessionID)
	}
}

// evmainState packs eventsFlow, opens a data dir for it as `bundle run`
// would, and starts its root run (not ticked): the start of the state an
// interrupted host leaves behind. The caller closes ds before running the
// CLI on path and data.
type evmainState struct {
	path, data string
	ds         *dataStore
	rt         *runtime.Runtime
	root       string
	listenerWF string // the workflow id of the flow's one listener
}

func newEvmainState(t *testing.T) evmainState {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	st := evmainState{path: packFlows(t, dir, "evmain.json", map[string]string{"evmain.json": eventsFlow}), data: filepath.Join(dir, "data")}
	b, err := bundle.Read(st.path)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{ReactPlaceholders: true})
	if err != nil {
		t.Fatal(err)
	}
	fi, ok := cb.Flow("evmain")
	if !ok || len(fi.Listeners) != 1 {
		t.Fatalf("flow evmain: listeners %v", fi.Listeners)
	}
	st.listenerWF = fi.Listeners[0]
	reg, _ := runtime.NewRegistry()
	if err := cb.Register(reg); err != nil {
		t.Fatal(err)
	}
	if st.ds, err = openDataStore(ctx, st.data, storeAuto); err != nil {
		t.Fatal(err)
	}
	if st.rt, err = runtime.New(runtime.Config{Store: st.ds.st, Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if st.root, err = st.rt.Start(ctx, runtime.StartParams{WorkflowID: bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, "evmain"), Vars: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	return st
}

// A process killed (or interrupted: Tick then fails on the cancelled
// context) between startListeners' Start of a listener run and its first
// Tick leaves the listener "running" at its entry, never parked on its
// wait_event. The printed continue command (--run-id ROOT) must finish
// the job: visualflow.md §5.7 says the host starts each listener AND ticks
// it to its first wait so that the root's emit_event reaches it;
// skipped as an existing listener, it would miss the root's "ping"
// (delivered 0) and the on_event branch would never run: the state left
// would not be resumable to the same outcome as an uninterrupted run
// (which delivers 1, TestBundleRunStartsAndStopsListeners): the continued
// run ticks such a listener on.
func TestBundleRunContinueTicksAListenerLeftRunning(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ev := newEvmainState(t)
	path, data, ds, rt, root := ev.path, ev.data, ev.ds, ev.rt, ev.root
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: ev.listenerWF, RunID: visualflow.ListenerRunID(root, 0),
		ParentRunID: root, SessionID: root, Vars: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := ds.close(); err != nil {
		t.Fatal(err)
	}

	// The continue command the interrupted process printed.
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", root)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("bundle run --run-id: exit %d\n%s%s", code, out, errOut)
	}
	output, _ := res["output"].(map[string]any)
	if d, _ := output["delivered"].(float64); d != 1 {
		t.Errorf("continued root's emit_event delivered %v, want 1 (the listener left running by the kill must be ticked to its wait_event)\n%s", output["delivered"], errOut)
	}
}

// A root whose event listeners another host started (the Python gateway,
// whose data dir `bundle run` works on; or any host following
// visualflow.md §5.7) has them under ids that host chose (Python:
// runtime.start's uuid), not "<root>-listener-<n>". Continuing the root
// with `bundle run --run-id` adopts them (its children running a listener
// workflow): §5.7 has ONE listener per on_event node, and a second one
// would make the root's emit_event reach both (delivered 2) and run the
// on_event branch twice. When the root completes, the adopted listener is
// cancelled like one of ours, instead of waiting for ever.
func TestBundleRunContinueAdoptsListenersOfAnotherHost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// What the other host left: the root (not ticked yet: it was
	// interrupted right after starting its listeners), and its listener,
	// started under an id of its own and parked on its wait_event.
	ev := newEvmainState(t)
	path, data, ds, rt, root := ev.path, ev.data, ev.ds, ev.rt, ev.root
	lid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: ev.listenerWF, ParentRunID: root, SessionID: root, Vars: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, lid, runtime.TickOptions{}); err != nil || st.Waiting == nil {
		t.Fatalf("listener %s not parked on its wait: %+v, %v", lid, st, err)
	}
	if err := ds.close(); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", root)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("bundle run --run-id: exit %d\n%s%s", code, out, errOut)
	}
	output, _ := res["output"].(map[string]any)
	if d, _ := output["delivered"].(float64); d != 1 {
		t.Errorf("continued root's emit_event delivered %v, want 1: the root already had its listener (%s), and a second one was started for the same on_event node\n%s",
			output["delivered"], lid, errOut)
	}
	ds, err = openDataStore(ctx, data, storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	rows, err := ds.st.RunIndex(ctx, &store.RunIndexParams{WorkflowID: ev.listenerWF, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		ids := []string{}
		for _, r := range rows {
			ids = append(ids, r.RunID)
		}
		t.Errorf("root %s has %d listener runs for its one on_event node, want 1: %v", root, len(rows), ids)
	}
	if l, err := ds.st.RunGet(ctx, lid); err != nil || l.Status != durable.RunCancelled {
		t.Errorf("adopted listener %s after the root completed: %+v, %v; want it cancelled", lid, l, err)
	}
}

// evqFlow: the root emits "ping" (session scope) and waits for the event
// "pong" of its session (run R1, whose session is its id); the flow's
// on_event "ping" listener asks the user a question and emits "pong" with
// the answer.
const evqFlow = `{"id":"evq","name":"evq","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"emit","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}],"effectConfig":{"name":"ping","scope":"session"}}},
 {"id":"wait","type":"wait_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"event_key","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"event_data","type":"any"}],"pinDefaults":{"event_key":"evt:session:R1:pong"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"got","type":"any"}]}},
 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 {"id":"ask","type":"ask_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"Name?"}}},
 {"id":"emit2","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"}],"effectConfig":{"name":"pong","scope":"session"}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"emit","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"exec-out","target":"wait","targetHandle":"exec-in"},
 {"source":"wait","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"wait","sourceHandle":"event_data","target":"end","targetHandle":"got"},
 {"source":"listen","sourceHandle":"exec-out","target":"ask","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"exec-out","target":"emit2","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"response","target":"emit2","targetHandle":"payload"}]}`

// A question asked by one of the run's event listeners.
//
// Reference: the Python gateway's runner ticks every run of the data dir
// (spec gateway-api §8.3/8.4), listener children included, so the
// listener's ask_user wait is a pending wait like any other: answered, the
// listener emits "pong" and the root completes (visualflow.md §5.7:
// listeners are children of the run in its session).
//
// bundle run used to drive only the root and the chain of subflows it
// waits on: the listener's "Name?" was never asked although --answer bob
// was there for it, the root's wait_event was reported as "nothing in
// this command can deliver it" (exit 3), and every continuation with
// --run-id did the same.
func TestBundleRunAnswersAListenersQuestion(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "evq.json", map[string]string{"evq.json": evqFlow})
	data := t.TempDir()
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1", "--answer", "bob")
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("listener asks \"Name?\" with --answer bob given: exit %d, status %v; want 0, completed\n%s%s",
			code, res["status"], out, errOut)
	}
	if !strings.Contains(out, "bob") {
		t.Errorf("the root's output does not carry the answer the listener emitted:\n%s", out)
	}
}

// A listener's question with no answer given stops the command like the
// root's own would (exit 3, naming the question); the printed continue
// command with --answer then finishes the run.
func TestBundleRunContinuesAtAListenersUnansweredQuestion(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "evq.json", map[string]string{"evq.json": evqFlow})
	data := t.TempDir()
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1")
	if code != exitWaiting || !strings.Contains(errOut, `waits for an answer to "Name?"`) {
		t.Fatalf("listener asks \"Name?\", no --answer: exit %d; want %d and the question named\n%s%s", code, exitWaiting, out, errOut)
	}
	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1", "--answer", "bob")
	if res := cliResult(t, out); code != 0 || res["status"] != "completed" || !strings.Contains(out, "bob") {
		t.Fatalf("continued with --answer bob: exit %d, status %v\n%s%s", code, res["status"], out, errOut)
	}
}

// pingThenEndFlow is a flow whose root emits "ping" (session scope) and
// ends at once, with an on_event "ping" listener node "listen" whose
// branch is the given nodes and edges (JSON list items, the first edge
// from "listen").
func pingThenEndFlow(id, branchNodes, branchEdges string) string {
	return `{"id":"` + id + `","name":"` + id + `","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"emit","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}],"effectConfig":{"name":"ping","scope":"session"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 ` + branchNodes + `],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"emit","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},
 ` + branchEdges + `]}`
}

// lateFlow: the listener of pingThenEndFlow sleeps 0.3 s (wait_until) in
// its branch, then answers the user "listener branch finished".
var lateFlow = pingThenEndFlow("late",
	`{"id":"nap","type":"wait_until","data":{"pinDefaults":{"duration":0.3},"inputs":[{"id":"exec-in","type":"execution"},{"id":"duration","type":"number"}],"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"latenote","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"message":"listener branch finished"}}}`,
	`{"source":"listen","sourceHandle":"exec-out","target":"nap","targetHandle":"exec-in"},
 {"source":"nap","sourceHandle":"exec-out","target":"latenote","targetHandle":"exec-in"}`)

// The root completes while its listener is in the middle of the branch
// the root's own event started (its wait_until inside the branch).
//
// Reference: AbstractFlow's VisualSessionRunner.run (the runner that
// "executes the root run and drives session-level listener runs"): when
// the root is COMPLETED it closes the session only "if all children are
// idle listeners (WAITING EVENT) or terminal"; otherwise it "keep[s]
// driving until children settle into waits/terminal" (_tick_child ticks
// a child waiting on UNTIL), and then cancels only the listeners waiting
// on an EVENT ("Session completed"). So the branch finishes: the
// answer_user node "latenote" runs.
//
// bundle run used to cancel every listener not ended as soon as the root
// was: the listener, parked on the wait_until of the branch the root's
// ping started, was cancelled and "latenote" never ran: the event the
// root delivered (delivered 1) was silently half-handled.
func TestBundleRunFinishesAListenerBranchAfterTheRunCompletes(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "late.json", map[string]string{"late.json": lateFlow})
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", t.TempDir())
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("exit %d, status %v\n%s%s", code, res["status"], out, errOut)
	}
	if !strings.Contains(errOut, "latenote") {
		t.Errorf("the listener's branch (started by the root's ping) was cut off when the root completed: "+
			"node latenote never ran; the reference drives non-idle listeners until they settle and cancels only those waiting on an event\n%s", errOut)
	}
}

// askLateFlow: the listener of pingThenEndFlow asks the user "Name?" and
// answers with the response.
var askLateFlow = pingThenEndFlow("asklate",
	`{"id":"ask","type":"ask_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"Name?"}}},
 {"id":"greetnote","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"}]}}`,
	`{"source":"listen","sourceHandle":"exec-out","target":"ask","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"exec-out","target":"greetnote","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"response","target":"greetnote","targetHandle":"message"}`)

// Same with a question: the listener asks "Name?" in the branch the
// root's ping started and --answer bob is given for it. The root
// completing first used to get the listener cancelled: the question was
// never put, the answer silently unused, exit 0. The reference
// (VisualSessionRunner.run) never cancels a listener that is not idle
// (waiting on an event); the command, which answers listeners' questions
// from --answer (bundle run usage text), answers it, prompting it with
// the listener's run id.
func TestBundleRunAnswersAListenersQuestionAskedAfterTheRunCompletes(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "asklate.json", map[string]string{"asklate.json": askLateFlow})
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", t.TempDir(), "--answer", "bob")
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("exit %d, status %v\n%s%s", code, res["status"], out, errOut)
	}
	if !strings.Contains(errOut, "-listener-0] Name?\n> bob") || !strings.Contains(errOut, "greetnote") {
		t.Errorf("the listener's question \"Name?\" (asked in the branch the root's ping started) was dropped by the "+
			"session close although --answer bob was given for it\n%s", errOut)
	}
}

// With no answer for the listener's question asked after the root
// completed, the session stays open: the command exits 3 (the run's JSON
// says completed), names the listener's run and its question, and does
// not cancel the listener; continuing the run answers the question,
// finishes the branch and closes the session.
func TestBundleRunContinuesAtAListenersQuestionAskedAfterTheRunCompletes(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "asklate.json", map[string]string{"asklate.json": askLateFlow})
	data := t.TempDir()
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1")
	if res := cliResult(t, out); code != exitWaiting || res["status"] != "completed" ||
		!strings.Contains(errOut, "? [R1-listener-0] Name?\n(no --answer left") ||
		!strings.Contains(errOut, `its run R1-listener-0 waits for an answer to "Name?"`) {
		t.Fatalf("listener asks \"Name?\" after the root completed, no --answer: exit %d, status %v; "+
			"want %d, completed, the listener's question named\n%s%s", code, res["status"], exitWaiting, out, errOut)
	}
	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1", "--answer", "bob")
	if res := cliResult(t, out); code != 0 || res["status"] != "completed" || !strings.Contains(errOut, "greetnote") {
		t.Fatalf("continued with --answer bob: exit %d, status %v; want 0, completed, greetnote run\n%s%s",
			code, res["status"], out, errOut)
	}
}
