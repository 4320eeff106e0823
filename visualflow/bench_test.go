package visualflow

import (
	"context"
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func benchPin(id, typ string) map[string]any {
	return map[string]any{"id": id, "label": id, "type": typ}
}

func benchNode(id, typ string, ins, outs []map[string]any, data map[string]any) map[string]any {
	if data == nil {
		data = map[string]any{}
	}
	in, out := make([]any, len(ins)), make([]any, len(outs))
	for i, p := range ins {
		in[i] = p
	}
	for i, p := range outs {
		out[i] = p
	}
	data["inputs"], data["outputs"] = in, out
	return map[string]any{"id": id, "type": typ, "data": data}
}

func benchEdge(s, sh, t, th string) map[string]any {
	return map[string]any{"source": s, "sourceHandle": sh, "target": t, "targetHandle": th}
}

var (
	execIn  = benchPin("exec-in", "execution")
	execOut = benchPin("exec-out", "execution")
)

// generatedFlow builds a flow of n nodes: a chain of set_var exec nodes,
// each fed by its own add node reading the previous variable.
func generatedFlow(n int) map[string]any {
	nodes := []any{benchNode("start", "on_flow_start", nil, []map[string]any{execOut}, nil)}
	var edges []any
	prev := "start"
	for i := 0; len(nodes) < n-1; i++ {
		sv, add, gv := fmt.Sprintf("sv%d", i), fmt.Sprintf("add%d", i), fmt.Sprintf("gv%d", i)
		nodes = append(nodes,
			benchNode(sv, "set_var", []map[string]any{execIn, benchPin("name", "string"), benchPin("value", "number")},
				[]map[string]any{execOut}, map[string]any{"pinDefaults": map[string]any{"name": fmt.Sprintf("v%d", i+1)}}),
			benchNode(add, "add", []map[string]any{benchPin("a", "number"), benchPin("b", "number")},
				[]map[string]any{benchPin("result", "number")}, map[string]any{"pinDefaults": map[string]any{"b": 1}}),
			benchNode(gv, "get_var", []map[string]any{benchPin("name", "string")},
				[]map[string]any{benchPin("value", "any")}, map[string]any{"pinDefaults": map[string]any{"name": fmt.Sprintf("v%d", i)}}))
		edges = append(edges, benchEdge(prev, "exec-out", sv, "exec-in"), benchEdge(gv, "value", add, "a"), benchEdge(add, "result", sv, "value"))
		prev = sv
	}
	nodes = append(nodes, benchNode("end", "on_flow_end", []map[string]any{execIn}, nil, nil))
	edges = append(edges, benchEdge(prev, "exec-out", "end", "exec-in"))
	return map[string]any{"id": "generated", "entryNode": "start", "nodes": nodes, "edges": edges}
}

func BenchmarkCompile200Nodes(b *testing.B) {
	flow := generatedFlow(200)
	if got := len(flow["nodes"].([]any)); got < 200 {
		b.Fatalf("generated %d nodes", got)
	}
	for b.Loop() {
		if _, err := Compile(flow, CompileOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// whileFlow counts i from 0 to n with a while loop of pure nodes: per
// iteration the condition evaluates compare+get_var and the body
// evaluates add+get_var+abs (5 pure evaluations).
func whileFlow(n int) map[string]any {
	num := func(id string) map[string]any { return benchPin(id, "number") }
	nodes := []any{
		benchNode("start", "on_flow_start", nil, []map[string]any{execOut}, nil),
		benchNode("while", "while", []map[string]any{execIn, benchPin("condition", "boolean")},
			[]map[string]any{benchPin("loop", "execution"), benchPin("done", "execution")}, nil),
		benchNode("cond_i", "get_var", []map[string]any{benchPin("name", "string")}, []map[string]any{benchPin("value", "any")},
			map[string]any{"pinDefaults": map[string]any{"name": "i"}}),
		benchNode("limit", "literal_number", nil, []map[string]any{num("value")}, map[string]any{"literalValue": n}),
		benchNode("lt", "compare", []map[string]any{benchPin("a", "any"), benchPin("op", "string"), benchPin("b", "any")},
			[]map[string]any{benchPin("result", "boolean")}, map[string]any{"pinDefaults": map[string]any{"op": "<"}}),
		benchNode("body_i", "get_var", []map[string]any{benchPin("name", "string")}, []map[string]any{benchPin("value", "any")},
			map[string]any{"pinDefaults": map[string]any{"name": "i"}}),
		benchNode("one", "abs", []map[string]any{num("value")}, []map[string]any{num("result")},
			map[string]any{"pinDefaults": map[string]any{"value": -1}}),
		benchNode("inc", "add", []map[string]any{num("a"), num("b")}, []map[string]any{num("result")}, nil),
		benchNode("set", "set_var", []map[string]any{execIn, benchPin("name", "string"), num("value")}, []map[string]any{execOut},
			map[string]any{"pinDefaults": map[string]any{"name": "i"}}),
		benchNode("end", "on_flow_end", []map[string]any{execIn, num("i")}, nil, nil),
	}
	edges := []any{
		benchEdge("start", "exec-out", "while", "exec-in"),
		benchEdge("cond_i", "value", "lt", "a"), benchEdge("limit", "value", "lt", "b"),
		benchEdge("lt", "result", "while", "condition"),
		benchEdge("while", "loop", "set", "exec-in"), benchEdge("while", "done", "end", "exec-in"),
		benchEdge("body_i", "value", "inc", "a"), benchEdge("one", "result", "inc", "b"),
		benchEdge("inc", "result", "set", "value"), benchEdge("cond_i", "value", "end", "i"),
	}
	return map[string]any{"id": "while-bench", "entryNode": "start", "nodes": nodes, "edges": edges}
}

func BenchmarkWhileLoop1000PureNodes(b *testing.B) {
	const iterations = 1000
	const evalsPerRun = iterations*5 + 2
	wf, err := Compile(whileFlow(iterations), CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var evals int
	for b.Loop() {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: map[string]any{"i": int64(0)}})
		if err != nil {
			b.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if st.Status != durable.RunCompleted || fmt.Sprint(st.Output["i"]) != "1000" {
			b.Fatalf("run ended %s with %v", st.Status, st.Output)
		}
		evals += evalsPerRun
	}
	b.ReportMetric(float64(evals)/b.Elapsed().Seconds(), "pure-evals/s")
}
