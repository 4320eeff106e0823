package visualflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// A node whose saved pins hold no execution pin is pure (§2 rule 3: the
// saved pins decide the role, not the type), and a pure node is evaluated
// by its type's own function (§4.5 `fn_P(inputs)`); only an unknown type
// is the identity. The reference builds one handler per node type and
// uses it for both roles (visual/executor.py `_create_handler`, then
// `pure_base_handlers[node.id] = base_handler`), so a data-only
// `function`, `if`, `switch` or `code` node computes what its exec form
// computes. These types have no builtin: they used to fall through to the
// identity (a data-only `function` node `n * 2` gave {n: 3}).
func TestPureFunctionTypeNodesRunTheirFunction(t *testing.T) {
	flow := rsFlow("purefn", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "n:number"}, nil),
		rsNode("fn", "function", []string{"n:number"}, []string{"result:number"}, map[string]any{"expression": "n * 2"}),
		rsNode("lit", "literal_boolean", nil, []string{"value:boolean"}, map[string]any{"literalValue": true}),
		rsNode("cond", "if", []string{"condition:boolean"}, []string{"branch:string", "condition:boolean"}, nil),
		rsNode("sw", "switch", []string{"value:any"}, []string{"branch:string"}, map[string]any{
			"switchConfig": map[string]any{"cases": []any{map[string]any{"id": "three", "value": 3}}}}),
		rsNode("code", "code", []string{"n:number"}, []string{"output:any"}, map[string]any{"codeBody": "return n + 1"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "doubled:any", "branch:any", "case:any", "plus:any"}, nil, nil),
	}, "start.exec-out>end.exec-in", "start.n>fn.n", "fn.result>end.doubled", "lit.value>cond.condition",
		"cond.branch>end.branch", "start.n>sw.value", "sw.branch>end.case", "start.n>code.n", "code.output>end.plus")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"n": int64(3)})
	if st.Status != "completed" {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	got := jsonText(t, st.Output)
	want := jsonText(t, map[string]any{"doubled": int64(6), "branch": "true", "case": "case:three", "plus": int64(4), "success": true})
	if got != want {
		t.Fatalf("pure function-type nodes were not evaluated by their own function\n got %s\nwant %s", got, want)
	}
}

// A pure function-type node that fails (here a code error) fails its
// consumer, as any pure node's error does (§4.5: the error propagates);
// it is not turned into an output.
func TestPureCodeNodeErrorFailsConsumer(t *testing.T) {
	flow := rsFlow("purecodeerr", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("code", "code", nil, []string{"output:any"}, map[string]any{"codeBody": "return 1 // 0"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>end.exec-in", "code.output>end.out")
	_, st := startRunWith(t, flow, CompileOptions{}, nil)
	if out := st.Output; st.Status != "completed" || out["success"] != false || out["node"] != "end" {
		t.Fatalf("status %s, output %s: want the consumer end to fail", st.Status, jsonText(t, st.Output))
	}
}

// A pure file node runs in the run's workspace scope, as its exec form
// does. (The reference passes a pure node only its pins, so its file
// access would be unscoped; keeping the scope is a deliberate difference.)
func TestPureFileNodeKeepsWorkspaceScope(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"in.txt": "inside", "../outside.txt": "escapes the workspace root"} {
		flow := rsFlow("purefile", "start", []map[string]any{
			rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
			rsNode("rf", "read_file", []string{"file_path:string"}, []string{"content:string"}, map[string]any{
				"pinDefaults": map[string]any{"file_path": path}}),
			rsNode("end", "on_flow_end", []string{"exec-in:exec", "content:any"}, nil, nil),
		}, "start.exec-out>end.exec-in", "rf.content>end.content")
		_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"workspace_root": root})
		if got := jsonText(t, st.Output); !strings.Contains(got, want) {
			t.Fatalf("read_file %q: output %s, want it to contain %q", path, got, want)
		}
	}
}

// A pin-only effect node is pure but never performs its effect: the
// reference's pure handler only describes the effect (`_pending_effect`,
// honoured by exec nodes alone) and Go keeps the identity (§2) for the
// types whose exec form is not a function. The run must not wait on it.
func TestPureEffectNodeRunsNoEffect(t *testing.T) {
	flow := rsFlow("pureeffect", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ask", "ask_user", []string{"prompt:string"}, []string{"response:string", "result:any"}, map[string]any{
			"pinDefaults": map[string]any{"prompt": "hi"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "asked:any"}, nil, nil),
	}, "start.exec-out>end.exec-in", "ask.result>end.asked")
	_, st := startRunWith(t, flow, CompileOptions{}, nil)
	if st.Status != "completed" || jsonText(t, st.Output) != jsonText(t, map[string]any{"asked": map[string]any{"prompt": "hi"}, "success": true}) {
		t.Fatalf("status %s, output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.5: a pure node's connected pin whose source has produced nothing is
// absent: its pinDefaults entry is not applied (wires always win).
func TestPureNodeIgnoresDefaultOfConnectedUnresolvedPin(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		getVarNode("gv", "x"),
		setVarNode("A", "seen", nil),
		setVarNode("B", "b", map[string]any{"value": "later"}),
	}, "start.exec-out>A.exec-in", "A.exec-out>B.exec-in", "gv.value>A.value", "B.value>gv.name")
	st := runFlow(t, flow, map[string]any{"x": "secret"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if v, ok := st.Vars["seen"]; !ok || v != nil {
		t.Fatalf("vars.seen = %s, want null (get_var's name is wired to a node that has not run)", jsonText(t, st.Vars["seen"]))
	}
}

// §4.5: pulling pin "output" of a scalar result yields the whole value,
// as pin "result" does.
func TestPullOutputPinOfScalarIsWholeValue(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("sum", "add", []string{"a:number", "b:number"}, []string{"output:number"},
			map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(2)}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "total:number"}, nil, nil),
	}, "start.exec-out>end.exec-in", "sum.output>end.total")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["total"]); got != "3.0" {
		t.Fatalf("output = %s, want total 3.0 (pin output of a scalar is the whole value)", jsonText(t, st.Output))
	}
}
