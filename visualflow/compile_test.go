package visualflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

func TestCompile_ErrorsAreTyped(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"f","nodes":[
	 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"n","type":"number"}]}},
	 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"flag","type":"boolean"}]}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
	 {"source":"s","sourceHandle":"n","target":"e","targetHandle":"flag"}]}`)
	_, err := Compile(flow, CompileOptions{Bundle: "b@1"})
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *CompileError", err)
	}
	if ce.Bundle != "b@1" || ce.Flow != "f" || ce.Node != "e" || ce.Pin != "flag" || !strings.Contains(ce.Msg, "type mismatch") {
		t.Fatalf("CompileError = %+v", ce)
	}
	if !strings.HasPrefix(err.Error(), "bundle b@1: flow f: node e: pin flag: type mismatch") {
		t.Fatalf("message = %q", err)
	}
}

func TestCompile_NoEntry(t *testing.T) {
	t.Parallel()
	_, err := Compile(map[string]any{"id": "empty", "nodes": []any{}, "edges": []any{}}, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "Flow must have an entry node") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Compile(map[string]any{"nodes": []any{}}, CompileOptions{}); err == nil {
		t.Fatal("flow without id compiled")
	}
}

func TestCompile_UnknownTypesAllowedOnRequest(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"u","nodes":[{"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"x","type":"custom_thing","data":{"inputs":[{"id":"exec-in","type":"execution"}],"outputs":[]}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"x","targetHandle":"exec-in"}]}`)
	if _, err := Compile(flow, CompileOptions{}); err == nil {
		t.Fatal("unknown type compiled by default")
	}
	_, st := startRunWith(t, flow, CompileOptions{AllowUnknownTypes: true}, map[string]any{"k": "v"})
	if st.Output["k"] != "v" || st.Output["success"] != true {
		t.Fatalf("identity node output = %v", st.Output)
	}
}

func TestCompileBundle_SubflowMustExist(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"p","nodes":[{"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"sub","type":"subflow","data":{"subflowId":"missing","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"}]}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"}]}`)
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "p"}}, Flows: map[string]string{"p": "flows/p.json"}},
		Flows: map[string]map[string]any{"p": flow},
	}
	_, err := CompileBundle(b, BundleOptions{})
	if err == nil || !strings.Contains(err.Error(), `bundle bb@2: flow p: node sub: subflow references flow "missing"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestTypesCoverCatalogue(t *testing.T) {
	t.Parallel()
	if n := len(Types()); n < 128 {
		t.Fatalf("Types() has %d entries, want the 128 catalogue types", n)
	}
	for _, typ := range []string{"agent", "subflow", "while", "join_exec", "path_mux", "generate_music", "memory_kg_resolve", "code", "read_pdf", "model_catalog"} {
		if !KnownType(typ) {
			t.Errorf("%s is not known", typ)
		}
	}
}

// A subflow node that starts a flow missing from the bundle is named in
// the error (CompileError.Node), as every other reference error of the
// compiler does: with several subflow nodes (or the same id under the
// flowId/workflowId aliases) the author must be told which node to fix.
func TestMissingSubflowErrorNamesTheNode(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, `{"id":"p","nodes":[{"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"ok","type":"subflow","data":{"subflowId":"p","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"}]}},
	 {"id":"bad","type":"subflow","data":{"flowId":"missing","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"}]}}],
	 "edges":[{"source":"s","sourceHandle":"exec-out","target":"ok","targetHandle":"exec-in"},
	 {"source":"ok","sourceHandle":"exec-out","target":"bad","targetHandle":"exec-in"}]}`)
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "p"}}, Flows: map[string]string{"p": "flows/p.json"}},
		Flows: map[string]map[string]any{"p": flow},
	}
	_, err := CompileBundle(b, BundleOptions{})
	if err == nil {
		t.Fatal("bundle with a subflow to a missing flow compiled")
	}
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Node != "bad" {
		t.Fatalf("error %q does not name the subflow node %q (CompileError %+v)", err, "bad", ce)
	}
}
