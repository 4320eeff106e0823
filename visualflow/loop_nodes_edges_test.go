package visualflow

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// loopEcho is start → L (the given scheduler node) whose loop body is an
// answer_user node with message wired from L.<pin>; L.done → end. It runs
// the flow with an answer_user handler recording every message.
func loopEcho(t *testing.T, loop map[string]any, pin string, vars map[string]any) (*durable.RunState, []any) {
	t.Helper()
	flow := rsFlow("loop_echo", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		loop,
		rsNode("say", "answer_user", []string{"exec-in:exec", "message:any"}, []string{"exec-out:exec", "message:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>L.exec-in", "L.loop>say.exec-in", "L."+pin+">say.message", "L.done>end.exec-in")
	var got []any
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		got = append(got, req.Effect.Payload["message"])
		return runtime.Completed(map[string]any{"message": req.Effect.Payload["message"], "level": "message"}), nil
	}}
	_, st := startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectAnswerUser: h}, vars)
	return st, got
}

func forNode(defaults map[string]any) map[string]any {
	return rsNode("L", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
		[]string{"loop:exec", "done:exec", "i:number", "index:number", "total:number"}, map[string]any{"pinDefaults": defaults})
}

// Spec §4.6.6 / §6.2 (`for`): floats, end-exclusive, fractional step; `i`
// is a float (`0.0`, `0.5`, …) and `index` counts from 0. Python
// control_adapter.create_for_node_handler.
func TestForFractionalStep(t *testing.T) {
	st, got := loopEcho(t, forNode(map[string]any{"start": int64(0), "end": 1.5, "step": 0.5}), "i", nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if want := []any{"0.0", "0.5", "1.0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("for 0..1.5 step 0.5: i = %#v, want %#v (str of floats, end exclusive)", got, want)
	}
	_, idx := loopEcho(t, forNode(map[string]any{"start": int64(0), "end": 1.5, "step": 0.5}), "index", nil)
	if want := []any{"0", "1", "2"}; !reflect.DeepEqual(idx, want) {
		t.Fatalf("for index = %#v, want %#v (ints)", idx, want)
	}
}

// Spec §4.6.6: numeric strings are accepted for start/end/step (Python
// _to_number: float(raw.strip())), bools read as 0/1.
func TestForNumericStringsAndBools(t *testing.T) {
	st, got := loopEcho(t, forNode(map[string]any{"start": " 1 ", "end": "3", "step": true}), "i", nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if want := []any{"1.0", "2.0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("for ' 1 '..'3' step true: i = %#v, want %#v", got, want)
	}
}

// Spec §4.6.6: step == 0 → _flow_error "For loop requires a non-zero
// 'step'." and the run completes with {success:false, error, node}; a
// missing start/end → "For loop requires numeric 'start' and 'end'.".
func TestForErrors(t *testing.T) {
	cases := []struct {
		defaults map[string]any
		want     string
	}{
		{map[string]any{"start": int64(0), "end": int64(3), "step": int64(0)}, "For loop requires a non-zero 'step'."},
		{map[string]any{"start": int64(0)}, "For loop requires numeric 'start' and 'end'."},
		{map[string]any{"start": "", "end": int64(3)}, "For loop requires numeric 'start' and 'end'."},
		{map[string]any{"start": []any{int64(1)}, "end": int64(3)}, "For loop requires numeric 'start' and 'end'."},
	}
	for _, tc := range cases {
		st, got := loopEcho(t, forNode(tc.defaults), "i", nil)
		if st.Status != durable.RunCompleted || st.Output["success"] != false || st.Output["error"] != tc.want || st.Output["node"] != "L" {
			t.Errorf("for %v: status %s output %s, want completed {success:false, error:%q, node:L}", tc.defaults, st.Status, jsonText(t, st.Output), tc.want)
		}
		if len(got) != 0 {
			t.Errorf("for %v: body ran %d times", tc.defaults, len(got))
		}
		if st.Vars["_flow_error"] != tc.want {
			t.Errorf("for %v: _flow_error = %#v", tc.defaults, st.Vars["_flow_error"])
		}
	}
}

// Spec §4.6.5: items that are a non-list scalar or object are iterated as
// [value]; a JSON-looking string is not parsed.
func TestLoopScalarItemsWrapped(t *testing.T) {
	loop := rsNode("L", "loop", []string{"exec-in:exec", "items:any"},
		[]string{"loop:exec", "done:exec", "item:any", "index:number", "total:number"},
		map[string]any{"pinDefaults": map[string]any{"items": "[1, 2]"}})
	st, got := loopEcho(t, loop, "item", nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if want := []any{"[1, 2]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("loop over string items: items = %#v, want %#v (one item, not parsed)", got, want)
	}
}

// Spec §4.6.7: the while iteration record's `item` is the bus value itself
// when the bus has no `item` key (here the start node's output object),
// and `index` counts iterations from 0.
func TestWhileItemIsBus(t *testing.T) {
	flow := rsFlow("while_item", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "x:number"}, nil),
		whileNode("W", map[string]any{"condition": true}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "item:any", "index:any"}, nil, nil),
	}, "start.exec-out>W.exec-in", "W.loop>end.exec-in", "W.item>end.item", "W.index>end.index")
	st := runFlow(t, flow, map[string]any{"x": int64(7)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["item"]); got != jsonText(t, map[string]any{"x": int64(7)}) {
		t.Errorf("while item = %s, want the bus {x: 7}", got)
	}
	if got := jsonText(t, st.Output["index"]); got != "0" {
		t.Errorf("while index = %s, want 0", got)
	}
}
