package visualflow_test

import (
	"os"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// docs/visualflow.md "API in one screen" compiles (as written, with the
// values it names) and runs on a bundle packed from a one-node flow.
func TestDocumentedAPIInOneScreen(t *testing.T) {
	dir := t.TempDir()
	jsonText := []byte(`{"id":"main","entryNode":"s","nodes":[{"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}}],"edges":[]}`)
	flow, err := bundle.DecodeFlow(jsonText)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := visualflow.Compile(flow, visualflow.CompileOptions{})
	if err != nil || wf == nil {
		t.Fatal(err)
	}
	root := dir + "/main.json"
	if err := os.WriteFile(root, jsonText, 0o644); err != nil {
		t.Fatal(err)
	}
	packed, err := bundle.Pack(root, dir, bundle.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteFile(dir+"/x.flow", packed); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(dir + "/x.flow")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	registry := &runtime.Registry{}
	if err = cb.Register(registry); err != nil {
		t.Fatal(err)
	}
	entrypoint := b.Manifest.Entrypoints[0].FlowID
	id := bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, entrypoint)
	if _, ok := registry.Get(id); !ok {
		t.Fatalf("%s not registered: %v", id, registry.IDs())
	}
}
