package main

import (
	"strings"
	"testing"
)

// A flow written by a Python tool may hold NaN or ±Infinity pin defaults
// (docs/compatibility.md "NaN and ±Infinity"): a bundle that validates,
// packs and runs with them is described by `bundle inspect` too, the
// literal written as Python's json.dumps writes it.
func TestInspectDescribesABundleWithNaNPinDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flow := `{"id":"nanf","name":"nanf","entryNode":"s","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"x","type":"number"}],"pinDefaults":{"x":NaN}}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"x","type":"number"}]}}],
 "edges":[{"id":"e1","source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
  {"id":"e2","source":"s","sourceHandle":"x","target":"e","targetHandle":"x"}]}`
	path := packFlows(t, dir, "nanf.json", map[string]string{"nanf.json": flow})
	if code, out, errOut := call(t, "validate", path); code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := call(t, "inspect", path)
	if code != 0 {
		t.Fatalf("inspect of a bundle validate accepts: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `"nanf@0.0.0"`) {
		t.Fatalf("inspect printed no description:\n%s", out)
	}
	if !strings.Contains(out, `"default": NaN`) {
		t.Fatalf("inspect did not write the NaN pin default as Python's literal:\n%s", out)
	}
}
