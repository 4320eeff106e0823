package runtime

// ASK_USER and WAIT_EVENT (builtin_wait.go): how their payloads shape the
// wait.

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Spec §3.1: ASK_USER's allow_free_text defaults to true.
func TestAskUserAllowsFreeTextByDefault(t *testing.T) {
	rt := errRuntime(t, memory.New(), Config{}, callThenDoneWorkflow(durable.EffectAskUser, map[string]any{"prompt": "Continue?"}))
	id := startRun(t, rt, StartParams{})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	if !run.Waiting.AllowFreeText {
		t.Errorf("ask_user without allow_free_text: wait allow_free_text false, want true")
	}
}

// Spec §3.3: WAIT_EVENT keeps prompt only when it is a non-blank string.
func TestWaitEventDropsABlankPrompt(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := eventRuntime(t, now, func(*durable.RunState) map[string]any {
		return map[string]any{"name": "ping", "prompt": "   "}
	}, nil)
	run := waitingListener(t, rt)
	if run.Waiting.Prompt != "" {
		t.Errorf("wait prompt %q, want none for a blank prompt", run.Waiting.Prompt)
	}
}

// handleWaitEvent/eventDeadline: timeout_s must be "a non-negative
// number": 0 is a deadline of now, not an error; a blank until counts as
// absent.
func TestWaitEventDeadlineFromZeroTimeoutAndBlankUntil(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		payload map[string]any
		want    time.Time
	}{
		{map[string]any{"name": "ping", "timeout_s": int64(0)}, now},
		{map[string]any{"name": "ping", "until": "  ", "timeout_s": int64(5)}, now.Add(5 * time.Second)},
	} {
		rt := eventRuntime(t, now, func(*durable.RunState) map[string]any { return c.payload }, nil)
		run := waitingListener(t, rt)
		if !run.Waiting.Until.Time.Equal(c.want) {
			t.Errorf("payload %v: wait until %v, want %v", c.payload, run.Waiting.Until, c.want)
		}
	}
}

func waitRequestFor(t *testing.T, typ durable.EffectType, payload map[string]any) *EffectRequest {
	t.Helper()
	rt := errRuntime(t, memory.New(), Config{})
	return &EffectRequest{
		Run:    &durable.RunState{RunID: "r1", WorkflowID: "wf", CurrentNode: "n1", Vars: map[string]any{}},
		Effect: &durable.Effect{Type: typ, Payload: payload},
		NodeID: "n1", DefaultNext: "n2", Runtime: rt,
	}
}

// ASK_USER with allow_free_text: false must offer choices only (Python:
// allow_free_text = bool(payload.get("allow_free_text", True))). It fails
// if builtin_wait.go handleAskUser's `allow = truthy(v)` ignores a false
// value (allow stays true).
func TestAskUserAllowFreeTextFalse(t *testing.T) {
	out, err := handleAskUser(context.Background(), waitRequestFor(t, durable.EffectAskUser,
		map[string]any{"prompt": "pick", "choices": []any{"a", "b"}, "allow_free_text": false}))
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if out.Wait.AllowFreeText {
		t.Fatal("allow_free_text=false was ignored: the wait allows free text")
	}
}

// WAIT_EVENT reads allow_free_text first and allowFreeText only when the
// first is absent or null (the loop breaks on the first non-null key, as
// Python's `payload.get("allow_free_text")` then the camelCase fallback).
// It fails if the `break` is dropped, so that the later key overrides the
// first.
func TestWaitEventFirstFreeTextKeyWins(t *testing.T) {
	out, err := handleWaitEvent(context.Background(), waitRequestFor(t, durable.EffectWaitEvent,
		map[string]any{"name": "go", "allow_free_text": true, "allowFreeText": false}))
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if !out.Wait.AllowFreeText {
		t.Fatal("allowFreeText overrode the allow_free_text given first")
	}
}

// WAIT_EVENT's session id is payload.session_id only when truthy (Python:
// `payload.get("session_id") or run.session_id or run.run_id`): a blank
// one falls back to the run's session. It fails if builtin_wait.go
// handleWaitEvent tests `v != nil` instead of `truthy(v)` (the wait fails
// for a missing scope id).
func TestWaitEventBlankSessionIDFallsBack(t *testing.T) {
	req := waitRequestFor(t, durable.EffectWaitEvent, map[string]any{"name": "go", "session_id": ""})
	req.Run.SessionID = "s1"
	out, err := handleWaitEvent(context.Background(), req)
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if out.Wait.WaitKey != "evt:session:s1:go" {
		t.Fatalf("wait key %q, want evt:session:s1:go", out.Wait.WaitKey)
	}
}

// Spec §3.4: a WAIT_UNTIL not yet due waits with the effect's result_key
// (a host resume of the until wait, which has no wait key, stores its
// payload there). It fails if handleWaitUntil leaves ResultKey out of
// the wait.
func TestWaitUntilWaitKeepsResultKey(t *testing.T) {
	req := builtinRequest(t, durable.EffectWaitUntil, map[string]any{"until": "2999-01-01T00:00:00+00:00"}, nil)
	out, err := handleWaitUntil(context.Background(), req)
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if out.Wait.Reason != durable.WaitUntil || out.Wait.ResultKey != "rk" || out.Wait.WaitKey != "" {
		t.Fatalf("wait reason %q result_key %q wait_key %q, want until/rk/none",
			out.Wait.Reason, out.Wait.ResultKey, out.Wait.WaitKey)
	}
}
