package runtime_test

// Tool call ids (spec §2.9, §2.3 step 5) as the Python kernel
// (AbstractRuntime 0.4.28) reads them: runtime_call_id kept as given,
// call_id derived from it, duplicate-id warnings. Where a comment says
// "Here", it tells what this runtime did before it was made to match.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ---------------------------------------------------------------------------
// TOOL_CALLS call ids (§2.3 step 5a/5c): Python reads a call id as
// `str(call_id).strip()` whenever it is not None, so an integer id 0 is
// the id "0" (no warning, call_id "0"). Here a falsy id (0, false) is
// treated as missing: the call gets the runtime id as its call_id and
// vars._flow_warnings gains "missing call_id … (count=1)".
//
// Python (tool_calls [{"call_id": 0}, {"call_id": 1}]): _flow_warnings
// absent, call ids seen by the handler ["0", "1"].
func TestPyFidelityToolCallIDZeroIsAnID(t *testing.T) {
	wf := oneEffect("tc0", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{map[string]any{"call_id": int64(0), "name": "x"}, map[string]any{"call_id": int64(1), "name": "y"}},
		}}
	})
	f := setup(t, wf)
	var ids []any
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls, _ := req.Effect.Payload["tool_calls"].([]any)
		for _, c := range calls {
			ids = append(ids, c.(map[string]any)["call_id"])
		}
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tc0"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := st.Vars["_flow_warnings"]; w != nil {
		t.Errorf("_flow_warnings %v; Python: none (call_id 0 is the id \"0\")", w)
	}
	if len(ids) != 2 || ids[0] != "0" || ids[1] != "1" {
		t.Errorf("call ids seen by the handler %v; Python: [0 1] as strings", ids)
	}
}

// ---------------------------------------------------------------------------
// TOOL_CALLS duplicate-id warning: Python lists the duplicated ids in the
// order they are first repeated and at most 5 of them
// (`", ".join(duplicates[:5])`); here they are sorted and all listed.
//
// Python: ids b,b,a,a → "#WARN: TOOL_CALLS duplicate call_id at node
// 'step' (b, a)"; ids g,g,f,f,e,e,d,d,c,c,b,b → "(g, f, e, d, c)".
func TestPyFidelityToolCallDuplicateWarningOrderAndCap(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"b", "b", "a", "a"}, "#WARN: TOOL_CALLS duplicate call_id at node 'step' (b, a)"},
		{[]string{"g", "g", "f", "f", "e", "e", "d", "d", "c", "c", "b", "b"}, "#WARN: TOOL_CALLS duplicate call_id at node 'step' (g, f, e, d, c)"},
	} {
		calls := []any{}
		for _, id := range tc.ids {
			calls = append(calls, map[string]any{"call_id": id, "name": "x"})
		}
		wf := oneEffect("tcd", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{"tool_calls": calls}}
		})
		f := setup(t, wf)
		f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
		}})
		ctx := context.Background()
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tcd"})
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := st.Vars["_flow_warnings"].([]any)
		if len(w) != 1 || w[0] != tc.want {
			t.Errorf("ids %v: _flow_warnings %v; Python: [%q]", tc.ids, w, tc.want)
		}
	}
}

// §2.9: "keep an existing non-empty runtime_call_id (as given)". Python
// keeps any non-null value whose str() is non-blank (a number from a
// provider included) and derives call_id from it; withRuntimeCallIDs
// kept only strings and replaced a numeric runtime_call_id by
// rtcall_<key>_<i+1>.
func TestHandlersNonStringRuntimeCallIDKept(t *testing.T) {
	got := toolCallAsHandled(t, 7)
	if got == nil {
		t.Fatal("handler not called")
	}
	if rt, _ := runtime.AsInt(got["runtime_call_id"]); rt != 7 || got["call_id"] != "7" {
		t.Fatalf("call = %v, want runtime_call_id 7 kept as given and call_id \"7\" (Python: str(7))", got)
	}
}

// §2.9 / Python _ensure_tool_calls_have_runtime_ids: a call without a
// call_id falls back to the runtime call id as Python reads it,
// str(runtime_call_id).strip(); withRuntimeCallIDs copied the untrimmed
// runtime_call_id into call_id ("  r1 " instead of "r1").
func TestHandlersCallIDFallbackIsTrimmed(t *testing.T) {
	got := toolCallAsHandled(t, "  r1 ")
	if got["call_id"] != "r1" || got["runtime_call_id"] != "  r1 " {
		t.Fatalf("call = %q, want call_id \"r1\" (trimmed) and runtime_call_id \"  r1 \" (as given)", got)
	}
}

// toolCallAsHandled runs a TOOL_CALLS effect of one call with the given
// runtime_call_id and returns that call as its handler received it.
func toolCallAsHandled(t *testing.T, runtimeCallID any) map[string]any {
	t.Helper()
	wf := oneEffect("tc", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{}, "runtime_call_id": runtimeCallID}},
		}}
	})
	f := setup(t, wf)
	var got map[string]any
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls, _ := req.Effect.Payload["tool_calls"].([]any)
		got, _ = calls[0].(map[string]any)
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tc"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	return got
}
