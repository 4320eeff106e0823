package visualflow

import (
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Every CompileError CompileBundle reports names the flow by its manifest
// flow id, also when a flow has several problems reported together (a
// joined error), so each message points at the flow to fix.
func TestCompileBundleJoinedErrorsNameTheManifestFlow(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"main","entryNode":"s","nodes":[
	 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"x1","type":"no_such_type","data":{}},
	 {"id":"x2","type":"no_such_type","data":{}}],
	 "edges":[]}`)
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "acme", BundleVersion: "1.0.0",
			Entrypoints: []bundle.Entrypoint{{FlowID: "main"}}, Flows: map[string]string{"main": "flows/main.json"}},
		Flows: map[string]map[string]any{"main": flow},
	}
	_, err := CompileBundle(b, BundleOptions{})
	if err == nil {
		t.Fatal("CompileBundle accepted unknown node types")
	}
	var found []*CompileError
	var walk func(error)
	walk = func(e error) {
		var ce *CompileError
		if errors.As(e, &ce) && ce == e {
			found = append(found, ce)
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	if len(found) < 2 {
		t.Fatalf("CompileBundle error %q holds %d CompileErrors, want one per unknown node", err, len(found))
	}
	for _, ce := range found {
		if ce.Flow != "main" {
			t.Errorf("CompileError %q names flow %q, want the manifest flow id \"main\"", ce, ce.Flow)
		}
	}
}

// With ReactPlaceholders, a ReAct workflow id shared by several agent nodes
// gets one placeholder: CompileBundle lists each workflow id once. Flow ids
// "x.y" and "x_y" sanitise to the same ReAct id (spec §5.6 sanitize).
func TestCompileBundleSharedReactIDHasOnePlaceholder(t *testing.T) {
	t.Parallel()
	agentFlow := func(id string) map[string]any {
		cfg := map[string]any{"provider": "p", "model": "m"}
		return rsFlow(id, "start", []map[string]any{
			rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
			rsNode("ag", "agent", []string{"exec-in:exec"}, []string{"exec-out:exec"}, map[string]any{"agentConfig": cfg}),
		}, "start.exec-out>ag.exec-in")
	}
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "acme", BundleVersion: "1.0.0",
			Entrypoints: []bundle.Entrypoint{{FlowID: "x.y"}}, Flows: map[string]string{"x.y": "flows/a.json", "x_y": "flows/b.json"}},
		Flows: map[string]map[string]any{"x.y": agentFlow("x.y"), "x_y": agentFlow("x_y")},
	}
	cb, err := CompileBundle(b, BundleOptions{ReactPlaceholders: true})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, wf := range cb.Workflows {
		count[wf.ID]++
	}
	const shared = "visual_react_agent_acme_1_0_0_x_y_ag"
	if count[shared] != 1 {
		t.Fatalf("placeholder %s listed %d times, want once (workflows %v)", shared, count[shared], count)
	}
}
