package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// TestCompileBundleKeepsManifestFlowIDsWhenBundleIDHoldsColon guarantees
// that CompileBundle describes each flow under its manifest flow id, also
// when the bundle id holds a ':' (the reader accepts any non-empty
// bundle_id, as Python's does; only a registry install restricts it,
// spec visualflow.md §7.2).
//
// Spec visualflow.md §8.1: every flow_id → path of manifest.flows is
// compiled and registered under its namespaced id, and every on_event node
// gets a listener workflow; §5.7: the host starts the entry flow's
// listeners with the run. AbstractGateway hosts/bundle_host.py
// load_from_dir iterates man.flows.items() and keeps the manifest flow id:
// the namespaced id "team:tools@1.0.0:main" is never split back (its
// first ':' is inside the bundle id), so cb.Flow("main") must find the
// entry flow and its listener.
func TestCompileBundleKeepsManifestFlowIDsWhenBundleIDHoldsColon(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"main","entryNode":"s","nodes":[
	 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"ev","type":"on_event","data":{"outputs":[{"id":"exec-out","type":"execution"}],"eventConfig":{"name":"ping"}}}],
	 "edges":[]}`)
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "team:tools", BundleVersion: "1.0.0",
			Entrypoints: []bundle.Entrypoint{{FlowID: "main"}}, Flows: map[string]string{"main": "flows/main.json"}},
		Flows: map[string]map[string]any{"main": flow},
	}
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, ok := cb.Flow("main")
	if !ok {
		var ids []string
		for _, f := range cb.Flows {
			ids = append(ids, f.FlowID)
		}
		t.Fatalf("CompileBundle describes flows %q, want the manifest flow id \"main\"", ids)
	}
	if fi.WorkflowID != "team:tools@1.0.0:main" || len(fi.Listeners) != 1 {
		t.Fatalf("flow main: workflow %q, listeners %v; want team:tools@1.0.0:main with one listener", fi.WorkflowID, fi.Listeners)
	}
}

// TestSubflowToMissingFlowOfBundleWhoseIDHoldsColonIsRefused guarantees
// that a subflow node naming, by namespaced id, a flow its own bundle
// lacks fails the bundle's load (spec visualflow.md §8.1, §8.3) also when
// the bundle id holds a ':': the reference is recognised as the bundle's
// own by its "<bundle_id>@<bundle_version>:" prefix, not by splitting it
// on its first ':'.
func TestSubflowToMissingFlowOfBundleWhoseIDHoldsColonIsRefused(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"main","entryNode":"s","nodes":[
	 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"sub","type":"subflow","data":{"subflowId":"team:tools@1.0.0:ghost","inputs":[{"id":"exec-in","type":"execution"}],
	   "outputs":[{"id":"exec-out","type":"execution"}]}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"}]}`)
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "team:tools", BundleVersion: "1.0.0",
			Entrypoints: []bundle.Entrypoint{{FlowID: "main"}}, Flows: map[string]string{"main": "flows/main.json"}},
		Flows: map[string]map[string]any{"main": flow},
	}
	_, err := CompileBundle(b, BundleOptions{})
	if err == nil || !strings.Contains(err.Error(), `subflow references flow "ghost", which is not in the bundle`) {
		t.Fatalf("CompileBundle = %v; want the subflow node refused for the missing flow ghost", err)
	}
}
