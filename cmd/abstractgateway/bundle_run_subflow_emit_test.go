package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// subEmitRoot calls the subflow subemit and ends with its delivered
// count; its on_event "ping" listener answers the user.
const subEmitRoot = `{"id":"subroot","name":"subroot","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"sub","type":"subflow","data":{"subflowId":"subemit","inputs":[{"id":"exec-in","type":"execution"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 {"id":"heard","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"message":"listener heard ping"}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},
 {"source":"listen","sourceHandle":"exec-out","target":"heard","targetHandle":"exec-in"}]}`

// subEmitChild emits "ping" in session scope and ends with the count.
const subEmitChild = `{"id":"subemit","name":"subemit","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"emit","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}],"effectConfig":{"name":"ping","scope":"session"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"emit","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"}]}`

// A session-scoped emit_event inside a subflow reaches the root flow's
// on_event listener. bundle run started the root without a session, so
// its subflow child (which inherits the parent's session) named its own
// id as the session and the listener, put in the root's id as session,
// never heard it; the root is now its own session, as the gateway makes
// a sessionless start and Python's VisualSessionRunner does.
func TestBundleRunSubflowEmitReachesTheRootsListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := packFlows(t, dir, "subroot.json", map[string]string{"subroot.json": subEmitRoot, "subemit.json": subEmitChild})
	data := filepath.Join(dir, "data")
	output, root, errOut := bundleRunCompleted(t, path, data)
	if d, _ := output["delivered"].(float64); d != 1 {
		t.Errorf("the subflow's emit_event delivered %v, want 1 (the root's on_event listener)\n%s", output["delivered"], errOut)
	}
	ctx := t.Context()
	ds, err := openDataStore(ctx, data, storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	st, err := ds.st.RunGet(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if st.SessionID != root {
		t.Errorf("root session %q, want its own id %q", st.SessionID, root)
	}
}

// bundleRunCompleted runs `bundle run path --data-dir data`, which must
// complete, and returns the run's output, its id and what it printed on
// stderr.
func bundleRunCompleted(t *testing.T, path, data string) (output map[string]any, runID, errOut string) {
	t.Helper()
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("bundle run: exit %d\n%s%s", code, out, errOut)
	}
	output, _ = res["output"].(map[string]any)
	runID, _ = res["run_id"].(string)
	return output, runID, errOut
}
