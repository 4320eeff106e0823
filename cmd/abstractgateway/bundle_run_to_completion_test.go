package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loopFlow: a `for` loop of 6000 iterations (the spec's guard is 10000)
// whose body says the index with answer_user: 12,000 ledger records.
const loopFlow = `{"id":"loopy","name":"loopy","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"n","type":"number"}],"pinDefaults":{"n":6000}}},
 {"id":"for","type":"for","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"start","type":"number"},{"id":"end","type":"number"},{"id":"step","type":"number"}],"outputs":[{"id":"loop","type":"execution"},{"id":"done","type":"execution"},{"id":"i","type":"number"},{"id":"index","type":"number"}],"pinDefaults":{"start":0,"step":1}}},
 {"id":"say","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"message","type":"string"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"for","targetHandle":"exec-in"},
 {"source":"start","sourceHandle":"n","target":"for","targetHandle":"end"},
 {"source":"for","sourceHandle":"loop","target":"say","targetHandle":"exec-in"},
 {"source":"for","sourceHandle":"i","target":"say","targetHandle":"message"},
 {"source":"for","sourceHandle":"done","target":"end","targetHandle":"exec-in"}]}`

// Without the fix, a run that needs more steps than one tick's budget
// (MaxSteps 10000) between waits is left "running": the driver returns as
// soon as the tick does, prints status "running" and exits 3 ("still
// waiting") although nothing is awaited and the run would complete on the
// next tick. No message says why.
func TestCLI_BundleRunFinishesARunLongerThanOneTickBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "loopy.json")
	if err := os.WriteFile(src, []byte(loopFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	flow := filepath.Join(dir, "loopy.flow")
	if code, out, errOut := call(t, "pack", "-o", flow, src); code != 0 {
		t.Fatalf("pack: %d %s %s", code, out, errOut)
	}
	code, out, _ := cliRun(t, strings.NewReader(""), flow)
	res := cliResult(t, out)
	if code != 0 || res["status"] != "completed" {
		t.Fatalf("a 6000-iteration for loop (no wait anywhere): exit %d, status %v; want exit 0, completed\n%s", code, res["status"], out)
	}
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
