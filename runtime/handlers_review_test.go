package runtime_test

// Regression tests from a review of the handler contract (spec §2.1,
// §2.9, §3.12): each failed before its fix, for the reason its comment
// states.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A handler's waiting outcome whose WaitState has no (or an unknown)
// reason was committed as is: callHandler checked only that the wait was
// not nil. Every store's decoder refuses such a wait, so once the run was
// read back from disk it could not be loaded at all any more. The kernel
// now fails the attempt, as for a waiting outcome without a wait.
func TestHandlersWaitWithoutValidReasonLeavesRunUnreadable(t *testing.T) {
	for _, backend := range []string{"jsonfile", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			open := func() (interface{ Close() error }, *runtime.Runtime) {
				wf := oneEffect("w", func() *durable.Effect {
					return &durable.Effect{Type: "host_wait", ResultKey: "r", Payload: map[string]any{}}
				})
				reg, err := runtime.NewRegistry(wf)
				if err != nil {
					t.Fatal(err)
				}
				var cfg runtime.Config
				var closer interface{ Close() error }
				switch backend {
				case "jsonfile":
					st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Store, closer = st, st
				default:
					st, err := sqlite.New(ctx, sqlite.Config{Path: dir + "/db.sqlite"})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Store, closer = st, st
				}
				cfg.Registry = reg
				rt, err := runtime.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				// A host handler that forgets the reason (the zero WaitState
				// fields are otherwise all legal).
				rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
					return &durable.WaitState{WaitKey: "k", ResumeToNode: req.DefaultNext, ResultKey: "r"}
				}))
				return closer, rt
			}
			st, rt := open()
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
				t.Fatalf("tick: %v", err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st2, rt2 := open()
			defer st2.Close()
			got, err := rt2.GetState(ctx, id)
			if err != nil {
				t.Fatalf("the run the kernel committed cannot be read back: %v", err)
			}
			if got.Status == durable.RunWaiting {
				t.Fatalf("run waits on a wait without a valid reason: %+v", got.Waiting)
			}
		})
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

// §2.6 step 4 / §3.12: a denial's error is the payload's reason, Python
// str(payload.get("reason") or "Denied by user").strip(); approvalResults
// read only a string reason, so a non-string one (a number, an object a
// UI sends) was replaced by "Denied by user".
func TestHandlersApprovalDenialNonStringReason(t *testing.T) {
	wf := oneEffect("ap", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "tool_results", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitUser, WaitKey: "tool_approval:abc", ResultKey: "tool_results",
			AllowFreeText: true, Details: map[string]any{
				"mode":       "approval_required",
				"tool_calls": []any{map[string]any{"name": "rm", "call_id": "c1", "arguments": map[string]any{}}},
			}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ap"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "tool_approval:abc",
		Payload: map[string]any{"approved": false, "reason": 42}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Vars["tool_results"].(map[string]any)
	results, _ := got["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("tool_results = %v", got)
	}
	if e := results[0].(map[string]any)["error"]; e != "42" {
		t.Fatalf("error = %v, want \"42\" (Python: str(reason))", e)
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
