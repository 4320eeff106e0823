package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A flow written by a Python tool may hold NaN or ±Infinity (json.dumps
// writes them, json.loads reads them): the bundle loads, a pin default no
// step reads is harmless, and one that reaches the run's vars fails the
// run with an error naming its path (vars must be JSON, which has no NaN;
// docs/compatibility.md "NaN and ±Infinity").
func TestBundleRunWithNaNPinDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, flow, status, err string
	}{
		{"unused", `{"id":"nanf","name":"nanf","entryNode":"s","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"a","type":"add","data":{"inputs":[{"id":"a","type":"number"},{"id":"b","type":"number"}],"outputs":[{"id":"result","type":"number"}],"pinDefaults":{"a":Infinity}}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}],
 "edges":[{"id":"e1","source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"}]}`, "completed", ""},
		{"reaching vars", `{"id":"nanf","name":"nanf","entryNode":"s","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"x","type":"number"}],"pinDefaults":{"x":NaN}}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"x","type":"number"}]}}],
 "edges":[{"id":"e1","source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
  {"id":"e2","source":"s","sourceHandle":"x","target":"e","targetHandle":"x"}]}`, "failed", "x is not JSON-serialisable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := packFlows(t, dir, "nanf.json", map[string]string{"nanf.json": tc.flow})
			_, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", filepath.Join(dir, "data"))
			res := cliResult(t, out)
			msg, _ := res["error"].(string)
			if res["status"] != tc.status || !strings.Contains(msg, tc.err) {
				t.Fatalf("status %v, error %q; want %s with %q\n%s%s", res["status"], msg, tc.status, tc.err, out, errOut)
			}
		})
	}
}
