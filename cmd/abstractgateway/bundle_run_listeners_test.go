package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
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
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("bundle run: exit %d\n%s%s", code, out, errOut)
	}
	output, _ := res["output"].(map[string]any)
	if d, _ := output["delivered"].(float64); d != 1 {
		t.Errorf("the root's emit_event delivered %v, want 1 (the flow's on_event listener started with the root run)\n%s", output["delivered"], out)
	}
	root, _ := res["run_id"].(string)
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
