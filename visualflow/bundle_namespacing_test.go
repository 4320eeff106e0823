package visualflow

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// nestedBundleZip builds a .flow zip holding flows main (start → subflow
// "child" → end, its "tag" pin wired from the child's output) and child
// (an on_flow_end whose "tag" pin defaults to tag).
func nestedBundleZip(t *testing.T, id, version, tag string) []byte {
	t.Helper()
	main := `{"id":"main","entryNode":"s","nodes":[
	 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"sub","type":"subflow","data":{"subflowId":"child","inputs":[{"id":"exec-in","type":"execution"}],
	   "outputs":[{"id":"exec-out","type":"execution"},{"id":"tag","type":"string"}]}},
	 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"tag","type":"string"}]}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
	  {"source":"sub","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
	  {"source":"sub","sourceHandle":"tag","target":"e","targetHandle":"tag"}]}`
	child := fmt.Sprintf(`{"id":"child","entryNode":"s","nodes":[
	 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"tag","type":"string"}],"pinDefaults":{"tag":%q}}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"}]}`, tag)
	manifest, err := json.Marshal(map[string]any{
		"bundle_format_version": "1", "bundle_id": id, "bundle_version": version,
		"entrypoints": []any{map[string]any{"flow_id": "main"}},
		"flows":       map[string]any{"main": "flows/main.json", "child": "flows/child.json"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{{"manifest.json", string(manifest)}, {"flows/main.json", main}, {"flows/child.json", child}} {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSameFlowIDsInSeveralBundlesRunTheirOwnSubflows guarantees, per spec
// visualflow.md §8.2 (two bundles may contain the same flow_id; the
// workflow id is <bundle_id>@<bundle_version>:<flow_id>) and §8.3 (a
// subflow reference to a flow of the same manifest is rewritten to that
// flow's namespaced id). Two versions of one bundle and another bundle,
// all holding flows "main" and "child", are registered in one registry:
// each main must start the child of its own bundle version.
func TestSameFlowIDsInSeveralBundlesRunTheirOwnSubflows(t *testing.T) {
	t.Parallel()
	type src struct{ id, version, tag string }
	srcs := []src{{"app", "1.0.0", "app-v1"}, {"app", "2.0.0", "app-v2"}, {"other", "1.0.0", "other"}}
	var wfs []*runtime.Workflow
	for _, s := range srcs {
		b, err := bundle.ReadBytes(nestedBundleZip(t, s.id, s.version, s.tag), s.id+"@"+s.version+".flow")
		if err != nil {
			t.Fatal(err)
		}
		cb, err := CompileBundle(b, BundleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fi, ok := cb.Flow("main")
		wantSub := bundle.WorkflowID(s.id, s.version, "child")
		if !ok || len(fi.Subflows) != 1 || fi.Subflows[0] != wantSub {
			t.Fatalf("%s@%s: main's subflows = %v, want [%s]", s.id, s.version, fi, wantSub)
		}
		wfs = append(wfs, cb.Workflows...)
	}
	rt := newTestRuntime(t, memory.New(), nil, wfs...)
	ctx := context.Background()
	for _, s := range srcs {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: bundle.WorkflowID(s.id, s.version, "main")})
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != durable.RunCompleted || st.Output["tag"] != s.tag {
			t.Errorf("%s@%s:main = %s %v (%s), want completed with tag %q", s.id, s.version, st.Status, st.Output, st.Error, s.tag)
		}
	}
}
