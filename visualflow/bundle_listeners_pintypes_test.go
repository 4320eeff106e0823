package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// vfbundleListenerFlow has a main path start -> end and an on_event listener
// whose path goes through the node given in tail (its only exec input
// being exec-in).
func vfbundleListenerFlow(t *testing.T, tail string) map[string]any {
	return mustFlow(t, `{"id":"p","entryNode":"start","nodes":[
	 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}},
	 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
	 `+tail+`],
	 "edges":[{"source":"start","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
	 {"source":"listen","sourceHandle":"exec-out","target":"tail","targetHandle":"exec-in"}]}`)
}

func vfbundleOneFlowBundle(flow map[string]any) *bundle.Bundle {
	return &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "p"}}, Flows: map[string]string{"p": "flows/p.json"}},
		Flows: map[string]map[string]any{"p": flow},
	}
}

// A subflow reached only from an on_event listener names a flow the
// bundle lacks: the listener workflow CompileBundle registers fails at
// run time ("Workflow 'missing' not found"), yet the bundle is accepted,
// while the same subflow on the main path is refused at load
// (TestCompileBundle_SubflowMustExist).
func TestListenerSubflowMustExist(t *testing.T) {
	t.Parallel()
	flow := vfbundleListenerFlow(t, `{"id":"tail","type":"subflow","data":{"subflowId":"missing","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"}]}}`)
	cb, err := CompileBundle(vfbundleOneFlowBundle(flow), BundleOptions{})
	if err == nil {
		var ids []string
		for _, wf := range cb.Workflows {
			ids = append(ids, wf.ID)
		}
		t.Fatalf("bundle accepted (workflows %v) although listener %s calls subflow %q, which is not in the bundle",
			ids, bundle.ListenerWorkflowID("bb@2:p", "listen"), "missing")
	}
	if !strings.Contains(err.Error(), `subflow references flow "missing"`) {
		t.Fatalf("err = %v", err)
	}
}

// An agent node reached only from an on_event listener: the listener
// workflow is registered, but with ReactPlaceholders no ReAct workflow is
// registered for its agent (FlowInfo.Agents only looks at the main
// program), so the listener's agent step cannot start its child.
func TestListenerAgentGetsReactWorkflow(t *testing.T) {
	t.Parallel()
	flow := vfbundleListenerFlow(t, `{"id":"tail","type":"agent","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"agentConfig":{"provider":"p","model":"m"}}}`)
	cb, err := CompileBundle(vfbundleOneFlowBundle(flow), BundleOptions{ReactPlaceholders: true})
	if err != nil {
		t.Fatal(err)
	}
	want := bundle.ReactWorkflowID("bb@2:p", "tail")
	var ids []string
	found := false
	for _, wf := range cb.Workflows {
		ids = append(ids, wf.ID)
		if wf.ID == want {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ReAct workflow %s registered for the listener's agent node; workflows: %v", want, ids)
	}
}

// The editor's areTypesCompatible (AbstractFlow validation.ts, every
// version) lets a string pin wire into a provider or model pin and back
// ("Provider/model are string-like"); pintypes.go promises "every flow
// the editor can save is accepted", but such flows are refused at load.
func TestStringProviderWiresAccepted(t *testing.T) {
	t.Parallel()
	cases := []struct{ src, dst string }{
		{"string", "provider"}, {"string", "model"}, {"provider", "string"}, {"model", "string"},
		{"string", "provider_text"}, {"string", "model_text"},
	}
	for _, c := range cases {
		flow := mustFlow(t, `{"id":"f","nodes":[
		 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"v","type":"`+c.src+`"}]}},
		 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"w","type":"`+c.dst+`"}]}}],
		 "edges":[{"source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
		 {"source":"s","sourceHandle":"v","target":"e","targetHandle":"w"}]}`)
		if _, err := Compile(flow, CompileOptions{}); err != nil {
			t.Errorf("%s -> %s (allowed by the editor): %v", c.src, c.dst, err)
		}
	}
}
