package visualflow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// rsNode builds a flow node; pins are "id:type" ("exec" means execution).
func rsNode(id, typ string, in, out []string, data map[string]any) map[string]any {
	pins := func(list []string) []any {
		res := []any{}
		for _, p := range list {
			i := strings.LastIndexByte(p, ':')
			pid, pt := p[:i], p[i+1:]
			if pt == "exec" {
				pt = "execution"
			}
			res = append(res, map[string]any{"id": pid, "label": pid, "type": pt})
		}
		return res
	}
	if data == nil {
		data = map[string]any{}
	}
	data["inputs"], data["outputs"] = pins(in), pins(out)
	return map[string]any{"id": id, "type": typ, "data": data}
}

// rsEdge is "src.handle>dst.handle".
func rsEdge(spec string) map[string]any {
	a, b, _ := strings.Cut(spec, ">")
	s, sh, _ := strings.Cut(a, ".")
	d, dh, _ := strings.Cut(b, ".")
	return map[string]any{"source": s, "sourceHandle": sh, "target": d, "targetHandle": dh}
}

func rsFlow(id, entry string, nodes []map[string]any, edges ...string) map[string]any {
	ns := []any{}
	for _, n := range nodes {
		ns = append(ns, n)
	}
	es := []any{}
	for _, e := range edges {
		es = append(es, rsEdge(e))
	}
	return map[string]any{"id": id, "entryNode": entry, "nodes": ns, "edges": es}
}

// compareStraightAndRestarted runs gc once straight through on the memory store and once
// step by step on the JSON file store with a fresh runtime per step
// (runStepwise), and compares the final outputs.
func compareStraightAndRestarted(t *testing.T, gc goldenCase) {
	t.Helper()
	raw, err := json.Marshal(gc)
	if err != nil {
		t.Fatal(err)
	}
	var wfs []*runtime.Workflow
	for _, f := range append([]map[string]any{gc.Flow}, gc.Subflows...) {
		wf, err := Compile(f, CompileOptions{})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		wfs = append(wfs, wf)
	}
	rt, id := startCase(t, gc, wfs)
	ctx := context.Background()
	straight, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gc.Resumes {
		straight, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: straight.Waiting.WaitKey, Payload: p})
		if err != nil {
			t.Fatal(err)
		}
	}
	stepwise := runStepwise(t, raw)
	if straight.Status != stepwise.Status {
		t.Fatalf("status: straight %s (%s), stepwise %s (%s)", straight.Status, straight.Error, stepwise.Status, stepwise.Error)
	}
	a, b := normJSON(t, straight.Output), normJSON(t, stepwise.Output)
	if a != b {
		t.Fatalf("output differs between an uninterrupted run and one restarted at every step\nstraight %s\nstepwise %s", a, b)
	}
}

// on_flow_start handed out the live var objects as its outputs; set_var
// on a dotted path then changed start's recorded output in place, but only
// while the run stayed in memory.
func TestSetVarDottedPathLeavesEarlierNodeOutput(t *testing.T) {
	flow := rsFlow("zz_setvar", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "cfg:object"}, nil),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "cfg.a", "value": 2}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "cfg:object"}, nil, nil),
	}, "start.exec-out>sv.exec-in", "sv.exec-out>end.exec-in", "start.cfg>end.cfg")
	compareStraightAndRestarted(t, goldenCase{Flow: flow, Vars: map[string]any{"cfg": map[string]any{"a": 1}}})
}

// add_message appends to vars.context in place; the context object
// on_flow_start output earlier changed with it, but only in memory.
func TestAddMessageLeavesEarlierNodeOutput(t *testing.T) {
	flow := rsFlow("zz_addmsg", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "context:object"}, nil),
		rsNode("am", "add_message", []string{"exec-in:exec", "role:string", "content:string"}, []string{"exec-out:exec", "message:object"},
			map[string]any{"pinDefaults": map[string]any{"role": "user", "content": "added"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "context:object"}, nil, nil),
	}, "start.exec-out>am.exec-in", "am.exec-out>end.exec-in", "start.context>end.context")
	compareStraightAndRestarted(t, goldenCase{Flow: flow, Vars: map[string]any{"context": map[string]any{"task": "t", "messages": []any{}}}})
}

// A code node interrupted by its caller (a shutdown cancels the tick's
// context) was recorded as the node's own failure: the run completed with
// success=false for good. It now stays at its checkpoint and runs the node
// again when it is ticked next.
func TestCodeNodeInterruptedByShutdownIsRunAgain(t *testing.T) {
	flow := rsFlow("zz_code", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("code", "code", []string{"exec-in:exec", "n:number"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"functionName": "transform", "pinDefaults": map[string]any{"n": 400000},
				"codeBody": "t = 0\nfor i in range(n):\n    t += i\nreturn {\"t\": t}"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "t:number"}, nil, nil),
	}, "start.exec-out>code.exec-in", "code.exec-out>end.exec-in", "code.output>end.t")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, memory.New(), nil, wf)
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	// The host shuts down while the code node runs.
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = rt.Tick(ctx, id, runtime.TickOptions{StepGate: func(_ context.Context, _ *durable.RunState, node string) error {
		if node == "code" {
			cancel()
		}
		return nil
	}})
	// After the restart the run continues.
	st, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("after an interrupted tick and a new one: status %s, output %s; want completed with success=true (the node interrupted, not failed)",
			st.Status, jsonText(t, st.Output))
	}
}
