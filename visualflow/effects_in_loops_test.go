package visualflow

// Effect nodes, waits, subflows and events inside loops, against spec §5
// (each iteration runs its effect and reads its own outcome; waits resumed
// several times, across store reopens; a child that fails; emits to a
// listener), from a review that found no difference.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// loopFlow: start(items) → loop → fx → set_var acc = append(acc, fx.<pin>);
// loop.done → end(acc). extra nodes / edges are appended.
func loopFlow(id string, fx map[string]any, pin string, extra []map[string]any, extraEdges ...string) map[string]any {
	nodes := []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "items:array"}, nil),
		rsNode("loop", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
		fx,
		rsNode("ga", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("app", "array_append", []string{"array:array", "item:any"}, []string{"result:array"}, nil),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:array"}, []string{"exec-out:exec", "value:array"},
			map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("gacc", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "acc:array"}, nil, nil),
	}
	nodes = append(nodes, extra...)
	edges := []string{"start.exec-out>loop.exec-in", "start.items>loop.items", "loop.loop>fx.exec-in",
		"fx.exec-out>sv.exec-in", "ga.value>app.array", "fx." + pin + ">app.item", "app.result>sv.value",
		"loop.done>end.exec-in", "gacc.value>end.acc"}
	return rsFlow(id, "start", nodes, append(edges, extraEdges...)...)
}

type loopClock struct{ t atomic.Int64 }

func (c *loopClock) now() time.Time { return time.Unix(0, c.t.Load()).UTC() }

func loopRuntime(t *testing.T, st store.Store, clk *loopClock, handlers map[durable.EffectType]runtime.Handler, flows ...map[string]any) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		wf, err := Compile(f, CompileOptions{})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		if err := reg.Put(wf); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	rt, err := runtime.New(runtime.Config{
		Store: st, Registry: reg, Handlers: handlers, MaxSteps: 100000,
		Clock: clk.now,
		NewID: func() string { n++; return fmt.Sprintf("id-%d", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func loopCounter(prefix string, calls *int) runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		*calls++
		return runtime.Completed(map[string]any{"content": fmt.Sprintf("%s%d", prefix, *calls)}), nil
	}}
}

// §5.1/§5.8 (Q14 changed in docs/visualflow.md: each iteration runs again):
// llm_call with a byte-identical payload in a loop: each iteration's
// downstream must read that iteration's outcome.
func TestLoopLLMCallInLoopReadsEachIteration(t *testing.T) {
	fx := rsNode("fx", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
		[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"prompt": "same", "provider": "p", "model": "m"}})
	calls := 0
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: loopCounter("r", &calls)},
		loopFlow("loop_l", fx, "response", nil))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop_l", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonText(t, st.Output["acc"]); calls != 3 || got != jsonText(t, []any{"r1", "r2", "r3"}) {
		t.Fatalf("calls %d, acc %s; want 3 calls and [r1 r2 r3] (status %s %s)", calls, got, st.Status, st.Error)
	}
}

// driveWaits ticks id, answering each wait with answer(i, state); reopen
// (if non-nil) gives a fresh runtime before each resume.
func driveWaits(t *testing.T, rt *runtime.Runtime, id string, reopen func() *runtime.Runtime, answer func(i int, st *durable.RunState) map[string]any) (*durable.RunState, int) {
	t.Helper()
	ctx := context.Background()
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waits := 0
	for st.Status == durable.RunWaiting && waits < 20 {
		p := answer(waits, st)
		waits++
		if reopen != nil {
			rt = reopen()
		}
		if p == nil {
			st, err = rt.Tick(ctx, id, runtime.TickOptions{})
		} else {
			st, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: p})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return st, waits
}

func askInLoopFlow(asLast bool) map[string]any {
	fx := rsNode("fx", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"}, nil)
	if !asLast {
		return loopFlow("loop_a", fx, "response", nil, "loop.item>fx.prompt")
	}
	return nil
}

// §5.2/§5.3: ask_user inside a loop body, resumed three times.
func TestLoopAskUserInLoop(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) {
			dir := t.TempDir()
			clk := newLoopClock()
			open := reopenJSON(t, dir, func(st store.Store) *runtime.Runtime {
				return loopRuntime(t, st, clk, nil, askInLoopFlow(false))
			})
			rt := open()
			id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_a", Vars: map[string]any{"items": []any{"a", "b", "c"}, "acc": []any{}}})
			if err != nil {
				t.Fatal(err)
			}
			var prompts []string
			var reopen func() *runtime.Runtime
			if restart {
				reopen = open
			}
			st, waits := driveWaits(t, rt, id, reopen, func(i int, st *durable.RunState) map[string]any {
				prompts = append(prompts, st.Waiting.Prompt)
				return map[string]any{"response": fmt.Sprintf("ans%d", i)}
			})
			if st.Status != durable.RunCompleted || waits != 3 || jsonText(t, st.Output["acc"]) != jsonText(t, []any{"ans0", "ans1", "ans2"}) ||
				fmt.Sprint(prompts) != "[a b c]" {
				t.Fatalf("status %s (%s), waits %d, prompts %v, acc %s; want 3 waits prompts [a b c] acc [ans0 ans1 ans2]",
					st.Status, st.Error, waits, prompts, jsonText(t, st.Output["acc"]))
			}
		})
	}
}

// ask_user as the last node of a loop body (no successor): control-return
// goes back to the loop after the answer.
func TestLoopAskUserLastInLoopBody(t *testing.T) {
	flow := rsFlow("loop_b", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "items:array"}, nil),
		rsNode("loop", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
		rsNode("fx", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "last:string"}, nil, nil),
	}, "start.exec-out>loop.exec-in", "start.items>loop.items", "loop.loop>fx.exec-in", "loop.item>fx.prompt",
		"loop.done>end.exec-in", "fx.response>end.last")
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, nil, flow)
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_b", Vars: map[string]any{"items": []any{"a", "b", "c"}}})
	st, waits := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
		return map[string]any{"response": fmt.Sprintf("ans%d", i)}
	})
	if st.Status != durable.RunCompleted || waits != 3 || st.Output["last"] != "ans2" {
		t.Fatalf("status %s (%s) waits %d output %s; want 3 waits, last=ans2", st.Status, st.Error, waits, jsonText(t, st.Output))
	}
}

// wait_event with one key in a loop, resumed three times; event_data read per iteration.
func TestLoopWaitEventInLoop(t *testing.T) {
	fx := rsNode("fx", "wait_event", []string{"exec-in:exec", "event_key:string"}, []string{"exec-out:exec", "event_data:any"},
		map[string]any{"pinDefaults": map[string]any{"event_key": "evt:session:s:k"}})
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, nil, loopFlow("loop_w", fx, "event_data", nil))
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_w", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
	st, waits := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
		return map[string]any{"v": int64(i)}
	})
	want := []any{map[string]any{"v": 0}, map[string]any{"v": 1}, map[string]any{"v": 2}}
	if st.Status != durable.RunCompleted || waits != 3 || jsonText(t, st.Output["acc"]) != jsonText(t, want) {
		t.Fatalf("status %s (%s) waits %d acc %s", st.Status, st.Error, waits, jsonText(t, st.Output["acc"]))
	}
}

// wait_until (10 s) in a loop: waits each iteration; clock advanced then ticked.
func TestLoopWaitUntilInLoop(t *testing.T) {
	fx := rsNode("fx", "wait_until", []string{"exec-in:exec", "duration:number"}, []string{"exec-out:exec", "until:string"},
		map[string]any{"pinDefaults": map[string]any{"duration": int64(10)}})
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, nil, loopFlow("loop_u", fx, "until", nil))
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_u", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
	st, waits := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
		clk.t.Add(int64(11 * time.Second))
		return nil
	})
	if st.Status != durable.RunCompleted || waits != 3 {
		t.Fatalf("status %s (%s) waits %d acc %s", st.Status, st.Error, waits, jsonText(t, st.Output["acc"]))
	}
	t.Logf("acc %s", jsonText(t, st.Output["acc"]))
}

func childFlow() map[string]any {
	return rsFlow("loop_child", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "q:string"}, nil),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"provider": "p", "model": "m"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string"}, nil, nil),
	}, "start.exec-out>llm.exec-in", "start.q>llm.prompt", "llm.exec-out>end.exec-in", "llm.response>end.r")
}

func echoLLM(fail string, calls *int) runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		*calls++
		p := fmt.Sprint(req.Effect.Payload["prompt"])
		if p == fail {
			return runtime.Failed("boom " + p), nil
		}
		return runtime.Completed(map[string]any{"content": "R:" + p}), nil
	}}
}

// §5.5: subflow in a loop; the child of item "b" fails. The parent must
// be resumed (not fail) and go on with the next items.
func TestLoopSubflowInLoopChildFails(t *testing.T) {
	for _, fail := range []string{"", "b"} {
		t.Run("fail="+fail, func(t *testing.T) {
			fx := rsNode("fx", "subflow", []string{"exec-in:exec", "q:string"}, []string{"exec-out:exec", "r:string", "output:object"},
				map[string]any{"subflowId": "loop_child"})
			calls := 0
			clk := newLoopClock()
			rt := loopRuntime(t, memory.New(), clk, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: echoLLM(fail, &calls)},
				loopFlow("loop_s", fx, "r", nil, "loop.item>fx.q"), childFlow())
			id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_s", Vars: map[string]any{"items": []any{"a", "b", "c"}, "acc": []any{}}})
			st, waits := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
				t.Logf("waiting: %s %s", st.Waiting.Reason, st.Waiting.WaitKey)
				return nil
			})
			want := []any{"R:a", "R:b", "R:c"}
			if fail == "b" {
				want = []any{"R:a", nil, "R:c"}
			}
			if st.Status != durable.RunCompleted || jsonText(t, st.Output["acc"]) != jsonText(t, want) {
				t.Fatalf("status %s (%s) waits %d acc %s; want completed acc %v", st.Status, st.Error, waits, jsonText(t, st.Output["acc"]), want)
			}
			tmp := st.Vars["_temp"].(map[string]any)
			t.Logf("last effect raw %s", jsonText(t, tmp["effects"].(map[string]any)["fx"]))
		})
	}
}

// §5.7: a root emitting in a loop; a listener (on_event) collecting the
// payloads and the event pins; the root reads delivered per iteration.
func TestLoopEmitInLoopToListener(t *testing.T) {
	flow := rsFlow("loop_e", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "items:array"}, nil),
		rsNode("loop", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
		rsNode("fx", "emit_event", []string{"exec-in:exec", "payload:any"}, []string{"exec-out:exec", "delivered:number", "delivered_to:array"},
			map[string]any{"effectConfig": map[string]any{"name": "ping"}}),
		rsNode("ga", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("app", "array_append", []string{"array:array", "item:any"}, []string{"result:array"}, nil),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:array"}, []string{"exec-out:exec", "value:array"},
			map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("gacc", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "acc:array"}, nil, nil),
		rsNode("listen", "on_event", nil, []string{"exec-out:exec", "payload:object", "event_id:string", "name:string"},
			map[string]any{"eventConfig": map[string]any{"name": "ping", "scope": "session"}}),
		rsNode("mk", "make_array", []string{"a:any", "b:any", "c:any"}, []string{"result:array"}, nil),
		rsNode("gs", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "seen"}}),
		rsNode("app2", "array_append", []string{"array:array", "item:any"}, []string{"result:array"}, nil),
		rsNode("sv2", "set_var", []string{"exec-in:exec", "name:string", "value:array"}, []string{"exec-out:exec", "value:array"},
			map[string]any{"pinDefaults": map[string]any{"name": "seen"}}),
	}, "start.exec-out>loop.exec-in", "start.items>loop.items", "loop.loop>fx.exec-in", "loop.item>fx.payload",
		"fx.exec-out>sv.exec-in", "ga.value>app.array", "fx.delivered>app.item", "app.result>sv.value",
		"loop.done>end.exec-in", "gacc.value>end.acc",
		"listen.exec-out>sv2.exec-in", "gs.value>app2.array", "listen.payload>app2.item", "app2.result>sv2.value")
	clk := newLoopClock()
	reg, _ := runtime.NewRegistry()
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lwf, err := Compile(flow, CompileOptions{WorkflowID: "loop_e_listener", EntryNode: "listen"})
	if err != nil {
		t.Fatal(err)
	}
	_ = reg.Put(wf)
	_ = reg.Put(lwf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 100000, Clock: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop_e_listener", RunID: "L", SessionID: "s1", Vars: map[string]any{"seen": []any{}}}); err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, "L", runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", err, st.Status)
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop_e", RunID: "R", SessionID: "s1", Vars: map[string]any{"items": []any{"x", "y", "z"}, "acc": []any{}}}); err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, "R", runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := rt.GetState(ctx, "L")
	t.Logf("root %s acc %s; listener %s seen %s", st.Status, jsonText(t, st.Output["acc"]), l.Status, jsonText(t, l.Vars["seen"]))
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["acc"]) != jsonText(t, []any{1, 0, 0}) ||
		jsonText(t, l.Vars["seen"]) != jsonText(t, []any{map[string]any{"value": "x"}}) {
		t.Fatalf("mismatch")
	}
}

// §5.8 + restart: llm_call and answer_user (identical payloads) in a loop,
// run one step per fresh runtime on the JSON file store.
func TestLoopLLMCallInLoopStepwiseJSONFile(t *testing.T) {
	fx := rsNode("fx", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
		[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"prompt": "same", "provider": "p", "model": "m"}})
	flow := loopFlow("loop_j", fx, "response", nil)
	calls := 0
	dir := t.TempDir()
	clk := newLoopClock()
	open := reopenJSON(t, dir, func(st store.Store) *runtime.Runtime {
		return loopRuntime(t, st, clk, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: loopCounter("r", &calls)}, flow)
	})
	rt := open()
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop_j", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
	var st *durable.RunState
	for range 200 {
		rt = open()
		var err error
		st, err = rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != durable.RunRunning {
			break
		}
	}
	if got := jsonText(t, st.Output["acc"]); calls != 3 || got != jsonText(t, []any{"r1", "r2", "r3"}) {
		t.Fatalf("calls %d, acc %s; want 3 calls and [r1 r2 r3] (status %s %s)", calls, got, st.Status, st.Error)
	}
}

// §5.7 on_schedule recurrent: branch runs once per interval and re-arms.
func TestLoopOnScheduleRecurrent(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	nodes := append([]map[string]any{
		rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"}, []string{"exec-out:exec", "timestamp:string"},
			map[string]any{"eventConfig": map[string]any{"schedule": "10s", "recurrent": true}}),
	}, inc...)
	flow := rsFlow("loop_sch", "sched", nodes, append([]string{"sched.exec-out>inc.exec-in"}, incE...)...)
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, nil, flow)
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop_sch", Vars: map[string]any{"count": int64(0)}})
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var untils []string
	for i := 0; i < 3; i++ {
		if st.Status != durable.RunWaiting {
			t.Fatalf("iteration %d: status %s (%s)", i, st.Status, st.Error)
		}
		untils = append(untils, durable.FormatTime(st.Waiting.Until.Time))
		clk.t.Add(int64(11 * time.Second))
		st, err = rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("untils %v count %v", untils, st.Vars["count"])
	if jsonText(t, st.Vars["count"]) != "3.0" {
		t.Fatalf("count %s, want 3.0", jsonText(t, st.Vars["count"]))
	}
}

func askChildFlow() map[string]any {
	return rsFlow("loop_askchild", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "q:string"}, nil),
		rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string"}, nil, nil),
	}, "start.exec-out>ask.exec-in", "start.q>ask.prompt", "ask.exec-out>end.exec-in", "ask.response>end.r")
}

// §5.5 + restart: a subflow in a loop whose child asks; the store is
// reopened before each answer; the parent collects each child's answer.
func TestLoopSubflowChildWaitsInLoopRestart(t *testing.T) {
	fx := rsNode("fx", "subflow", []string{"exec-in:exec", "q:string"}, []string{"exec-out:exec", "r:string"},
		map[string]any{"subflowId": "loop_askchild", "outputKey": "lastout"})
	flow := loopFlow("loop_sw", fx, "r", nil, "loop.item>fx.q")
	dir := t.TempDir()
	clk := newLoopClock()
	open := reopenJSON(t, dir, func(st store.Store) *runtime.Runtime {
		return loopRuntime(t, st, clk, nil, flow, askChildFlow())
	})
	rt := open()
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop_sw", RunID: "P", Vars: map[string]any{"items": []any{"a", "b", "c"}, "acc": []any{}}})
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && st.Status == durable.RunWaiting; i++ {
		child := st.Waiting.Details["sub_run_id"]
		cid, _ := child.(string)
		if cid == "" {
			cid = st.Waiting.WaitKey[len("subworkflow:"):]
		}
		rt = open()
		cs, err := rt.GetState(ctx, cid)
		if err != nil {
			t.Fatal(err)
		}
		if cs.Status != durable.RunWaiting {
			t.Fatalf("child %s status %s (%s)", cid, cs.Status, cs.Error)
		}
		if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: cid, WaitKey: cs.Waiting.WaitKey, Payload: map[string]any{"response": "ans-" + cs.Waiting.Prompt}}); err != nil {
			t.Fatal(err)
		}
		rt = open()
		st, err = rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status == durable.RunRunning {
			st, _ = rt.Tick(ctx, id, runtime.TickOptions{})
		}
	}
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["acc"]) != jsonText(t, []any{"ans-a", "ans-b", "ans-c"}) {
		t.Fatalf("status %s (%s) acc %s", st.Status, st.Error, jsonText(t, st.Output["acc"]))
	}
	t.Logf("lastout %s", jsonText(t, st.Vars["lastout"]))
}

// Effect nodes as the last node of a loop body (no successor): the loop
// must run every iteration (control-return, §4.6.1 with §5.1 step 4).
func TestLoopEffectLastInLoopBody(t *testing.T) {
	cases := map[string]map[string]any{
		"subflow": rsNode("fx", "subflow", []string{"exec-in:exec", "q:string"}, []string{"exec-out:exec", "r:string"},
			map[string]any{"subflowId": "loop_child"}),
		"llm_call": rsNode("fx", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"provider": "p", "model": "m"}}),
		"emit_event": rsNode("fx", "emit_event", []string{"exec-in:exec", "payload:any"}, []string{"exec-out:exec"},
			map[string]any{"effectConfig": map[string]any{"name": "n"}}),
		"wait_event": rsNode("fx", "wait_event", []string{"exec-in:exec", "event_key:string"}, []string{"exec-out:exec", "event_data:any"}, nil),
	}
	for name, fx := range cases {
		t.Run(name, func(t *testing.T) {
			pin := map[string]string{"subflow": "q", "llm_call": "prompt", "emit_event": "payload", "wait_event": "event_key"}[name]
			inc, incE := rvInc("inc", "count")
			nodes := append([]map[string]any{
				rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "items:array"}, nil),
				rsNode("loop", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
				fx,
				rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
				getVarNode("gv", "count"),
				rsNode("end", "on_flow_end", []string{"exec-in:exec", "count:number"}, nil, nil),
			}, inc...)
			edges := append([]string{"start.exec-out>loop.exec-in", "start.items>loop.items", "loop.loop>seq.exec-in",
				"seq.then:0>inc.exec-in", "seq.then:1>fx.exec-in", "loop.item>fx." + pin, "loop.done>end.exec-in", "gv.value>end.count"}, incE...)
			flow := rsFlow("loop_last", "start", nodes, edges...)
			calls := 0
			clk := newLoopClock()
			rt := loopRuntime(t, memory.New(), clk, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: echoLLM("", &calls)}, flow, childFlow())
			id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_last", Vars: map[string]any{"items": []any{"a", "b", "c"}, "count": int64(0)}})
			st, waits := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
				if st.Waiting.Reason == durable.WaitEvent {
					return map[string]any{"x": 1}
				}
				return nil
			})
			if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "3.0" {
				t.Fatalf("status %s (%s) waits %d output %s; want count 3", st.Status, st.Error, waits, jsonText(t, st.Output))
			}
		})
	}
}

// §5.8: waits with identical payloads in a loop on the JSON file store
// (non-atomic: ledger look-ups), restarted or not.
func TestLoopIdenticalWaitsInLoopJSONFile(t *testing.T) {
	fxs := map[string]map[string]any{
		"ask_user": rsNode("fx", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:any"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "same"}}),
		"wait_event": rsNode("fx", "wait_event", []string{"exec-in:exec", "event_key:string"}, []string{"exec-out:exec", "event_data:any"},
			map[string]any{"pinDefaults": map[string]any{"event_key": "k"}}),
	}
	for name, fx := range fxs {
		for _, restart := range []bool{false, true} {
			t.Run(fmt.Sprint(name, " restart=", restart), func(t *testing.T) {
				pin := map[string]string{"ask_user": "response", "wait_event": "event_data"}[name]
				flow := loopFlow("loop_id", fx, pin, nil)
				dir := t.TempDir()
				clk := newLoopClock()
				open := reopenJSON(t, dir, func(st store.Store) *runtime.Runtime {
					return loopRuntime(t, st, clk, nil, flow)
				})
				rt := open()
				id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_id", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
				var reopen func() *runtime.Runtime
				if restart {
					reopen = open
				}
				st, waits := driveWaits(t, rt, id, reopen, func(i int, st *durable.RunState) map[string]any {
					return map[string]any{"response": fmt.Sprint("ans", i)}
				})
				var want []any
				for i := 0; i < 3; i++ {
					if name == "ask_user" {
						want = append(want, fmt.Sprint("ans", i))
					} else {
						want = append(want, map[string]any{"response": fmt.Sprint("ans", i)})
					}
				}
				if st.Status != durable.RunCompleted || waits != 3 || jsonText(t, st.Output["acc"]) != jsonText(t, want) {
					t.Fatalf("status %s (%s) waits %d acc %s", st.Status, st.Error, waits, jsonText(t, st.Output["acc"]))
				}
			})
		}
	}
}

// while condition reading an effect output produced in its own body.
func TestLoopWhileOnAskResponse(t *testing.T) {
	flow := rsFlow("loop_wh", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		whileNode("wh", nil),
		rsNode("cmp", "compare", []string{"a:any", "b:any", "op:string"}, []string{"result:boolean"},
			map[string]any{"pinDefaults": map[string]any{"b": "stop", "op": "!="}}),
		rsNode("fx", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:any"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "more?"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "last:any"}, nil, nil),
	}, "start.exec-out>wh.exec-in", "cmp.result>wh.condition", "fx.response>cmp.a", "wh.loop>fx.exec-in",
		"wh.done>end.exec-in", "fx.response>end.last")
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, nil, flow)
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_wh"})
	answers := []string{"go", "go", "stop"}
	st, waits := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
		return map[string]any{"response": answers[i%3]}
	})
	if st.Status != durable.RunCompleted || waits != 3 || st.Output["last"] != "stop" {
		t.Fatalf("status %s (%s) waits %d out %s", st.Status, st.Error, waits, jsonText(t, st.Output))
	}
}

// §4.7 terminal effect node: completes with {success:true, result: outcome}.
func TestLoopTerminalEffectOutput(t *testing.T) {
	cases := map[string]map[string]any{
		"llm_call": rsNode("fx", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"prompt": "q", "provider": "p", "model": "m"}}),
		"ask_user": rsNode("fx", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:any"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "q"}}),
		"subflow": rsNode("fx", "subflow", []string{"exec-in:exec", "q:string"}, []string{"exec-out:exec", "r:string"},
			map[string]any{"subflowId": "loop_child", "pinDefaults": map[string]any{"q": "q"}}),
	}
	for name, fx := range cases {
		t.Run(name, func(t *testing.T) {
			flow := rsFlow("loop_term", "start", []map[string]any{rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil), fx},
				"start.exec-out>fx.exec-in")
			calls := 0
			clk := newLoopClock()
			rt := loopRuntime(t, memory.New(), clk, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: echoLLM("", &calls)}, flow, childFlow())
			id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_term"})
			st, _ := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
				return map[string]any{"response": "yes"}
			})
			t.Logf("%s: status %s output %s", name, st.Status, jsonText(t, st.Output))
			if st.Status != durable.RunCompleted || st.Output["success"] != true || st.Output["result"] == nil {
				t.Fatalf("want {success:true, result:<outcome>}")
			}
		})
	}
}

// §5.5/§5.8: a subflow with identical inputs in every iteration: each
// iteration is a separate child run (waits are not deduplicated).
func TestLoopSubflowIdenticalInputsInLoop(t *testing.T) {
	for _, js := range []bool{false, true} {
		t.Run(fmt.Sprint("jsonfile=", js), func(t *testing.T) {
			fx := rsNode("fx", "subflow", []string{"exec-in:exec", "q:string"}, []string{"exec-out:exec", "r:string", "sub_run_id:string"},
				map[string]any{"subflowId": "loop_child", "pinDefaults": map[string]any{"q": "same"}})
			calls := 0
			clk := newLoopClock()
			var st store.Store = memory.New()
			if js {
				s, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				st = s
			}
			h := loopCounter("r", &calls)
			rt := loopRuntime(t, st, clk, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: h},
				loopFlow("loop_si", fx, "r", nil), childFlow())
			id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_si", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
			res, _ := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any { return nil })
			if res.Status != durable.RunCompleted || calls != 3 || jsonText(t, res.Output["acc"]) != jsonText(t, []any{"r1", "r2", "r3"}) {
				t.Fatalf("status %s (%s) calls %d acc %s", res.Status, res.Error, calls, jsonText(t, res.Output["acc"]))
			}
		})
	}
}

// §5.3 outputKey of an effect node in a loop, read by the next node.
func TestLoopOutputKeyInLoop(t *testing.T) {
	fx := rsNode("fx", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:any"},
		map[string]any{"outputKey": "ans", "pinDefaults": map[string]any{"prompt": "q"}})
	flow := loopFlow("loop_ok", fx, "response", []map[string]any{getVarNode("gans", "ans")})
	// replace the wire fx.response>app.item by gans.value>app.item
	edges := flow["edges"].([]any)
	for i, e := range edges {
		m := e.(map[string]any)
		if m["source"] == "fx" && m["sourceHandle"] == "response" {
			edges[i] = rsEdge("gans.value>app.item")
		}
	}
	clk := newLoopClock()
	rt := loopRuntime(t, memory.New(), clk, nil, flow)
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "loop_ok", Vars: map[string]any{"items": []any{1, 2, 3}, "acc": []any{}}})
	st, _ := driveWaits(t, rt, id, nil, func(i int, st *durable.RunState) map[string]any {
		return map[string]any{"response": fmt.Sprint("ans", i)}
	})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["acc"]) != jsonText(t, []any{"ans0", "ans1", "ans2"}) {
		t.Fatalf("status %s (%s) acc %s", st.Status, st.Error, jsonText(t, st.Output["acc"]))
	}
}

// newLoopClock is a loopClock at fixedClock.
func newLoopClock() *loopClock {
	clk := &loopClock{}
	clk.t.Store(fixedClock.UnixNano())
	return clk
}

// reopenJSON returns a function that opens the JSON-file store in dir
// again, as a restarted process does (closing the store it opened last),
// and gives the runtime build makes over it. The last store is closed
// when the test ends.
func reopenJSON(t *testing.T, dir string, build func(store.Store) *runtime.Runtime) func() *runtime.Runtime {
	t.Helper()
	var cur store.Store
	t.Cleanup(func() {
		if cur != nil {
			_ = cur.Close()
		}
	})
	return func() *runtime.Runtime {
		if cur != nil {
			_ = cur.Close()
		}
		st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		cur = st
		return build(st)
	}
}
