package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// feEventPlay starts a listener run (wait_event with name and scope) and
// then delivers name/scope either from an emitter run of the same
// workflow and session (emit_event) or from outside (EmitEvent), and
// checks that whenever both sides accept the same name and scope, the
// event reaches the listener.
func feEventPlay(t *testing.T, st store.Store, name, scope any, payload map[string]any, external bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wf := &runtime.Workflow{ID: "ev", Entry: "n", Nodes: map[string]runtime.NodeFunc{
		"n": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			if run.Vars["role"] == "listen" {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
					Payload: map[string]any{"name": pyjson.Clone(name), "scope": pyjson.Clone(scope)}, ResultKey: "evt"}, "done")
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": pyjson.Clone(name), "scope": pyjson.Clone(scope), "payload": pyjson.CloneObject(payload)}, ResultKey: "res"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"evt": run.Vars["evt"], "res": run.Vars["res"]})
		}),
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: func() time.Time { return feNow }})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ev", RunID: "listener", SessionID: feSession, Vars: map[string]any{"role": "listen"}}); err != nil {
		t.Fatal(err)
	}
	l, err := rt.Tick(ctx, "listener", runtime.TickOptions{})
	if ctx.Err() != nil {
		t.Fatalf("listener tick hung: %v", err)
	}
	if err != nil {
		t.Fatalf("listener tick: %v", err)
	}
	out = append(out, fmt.Sprintf("listener: %s %q", l.Status, l.Error))
	if l.Status == durable.RunFailed {
		if !strings.Contains(l.Error, "wait_event") {
			t.Fatalf("listener failed with an error that does not name the effect: %q", l.Error)
		}
		return out
	}
	if l.Status != durable.RunWaiting || l.Waiting == nil {
		t.Fatalf("listener %s, want waiting or failed", l.Status)
	}
	key := l.Waiting.WaitKey
	out = append(out, "key "+key)
	delivered := false
	if external {
		n, _ := name.(string)
		s, _ := scope.(string)
		ids, eerr := rt.EmitEvent(ctx, runtime.EmitParams{Name: n, Scope: s, SessionID: feSession, WorkflowID: "ev", RunID: "listener", Payload: payload})
		if ctx.Err() != nil {
			t.Fatalf("EmitEvent hung: %v", eerr)
		}
		out = append(out, fmt.Sprintf("emit: %v %v", ids, feErr(eerr)))
		_, nameIsText := name.(string)
		_, scopeIsText := scope.(string)
		if eerr == nil {
			delivered = len(ids) == 1 && ids[0] == "listener"
			if !delivered && nameIsText && (scopeIsText || scope == nil) {
				t.Fatalf("EmitEvent(name %q, scope %q) accepted but not delivered to the listener waiting on %q (delivered to %v)", n, s, key, ids)
			}
		} else if !strings.Contains(eerr.Error(), "emit event") {
			t.Fatalf("EmitEvent error does not say what failed: %v", eerr)
		}
	} else {
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ev", RunID: "emitter", SessionID: feSession, Vars: map[string]any{"role": "emit"}}); err != nil {
			t.Fatal(err)
		}
		e, err := rt.Tick(ctx, "emitter", runtime.TickOptions{})
		if ctx.Err() != nil {
			t.Fatalf("emitter tick hung: %v", err)
		}
		if err != nil {
			t.Fatalf("emitter tick: %v", err)
		}
		out = append(out, fmt.Sprintf("emitter: %s %q %s", e.Status, e.Error, feJSON(feScrub(pyjson.Clone(e.Output)))))
		res := mapOf(mapOf(e.Output)["res"])
		if e.Status == durable.RunCompleted {
			if res["wait_key"] != key && eventScopeOf(key) != "run" {
				t.Fatalf("the emitter built key %v, the listener waits on %q, for the same name and scope", res["wait_key"], key)
			}
			delivered = feJSON(res["delivered_to"]) == `["listener"]`
			if eventScopeOf(key) != "run" && !delivered {
				t.Fatalf("emit_event completed (%s) but did not deliver to the listener waiting on %q", feJSON(res), key)
			}
		} else if e.Status != durable.RunFailed || !strings.Contains(e.Error, "emit_event") {
			t.Fatalf("emitter %s (error %q), want completed or failed naming emit_event", e.Status, e.Error)
		}
	}
	after, err := st.RunGet(ctx, "listener")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("listener after: %s %q %s", after.Status, after.Error, feJSON(after.Output)))
	if delivered {
		if after.Status != durable.RunCompleted {
			t.Fatalf("the event was delivered but the listener is %s (error %q)", after.Status, after.Error)
		}
		evt := mapOf(mapOf(after.Output)["evt"])
		if feJSON(evt["payload"]) != feJSON(payload) && !(len(payload) == 0 && feJSON(evt["payload"]) == "{}") {
			t.Fatalf("the listener got payload %s, the event carried %s", feJSON(evt["payload"]), feJSON(payload))
		}
	} else if after.Status != durable.RunWaiting || after.Waiting == nil || after.Waiting.WaitKey != key {
		t.Fatalf("no delivery, but the listener is %s (wait %v)", after.Status, after.Waiting)
	}
	return out
}

func eventScopeOf(key string) string {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[1]
}

// FuzzEventKeysAgree: a wait_event and an emit_event (from a run of the
// same workflow and session, or EmitEvent from outside) given the same
// fuzzed name and scope (JSON values: strings with odd case, spaces,
// colons, non-ASCII, or other types) must agree: when the wait is
// accepted and the emit is accepted, the emit builds the key the
// listener waits on and resumes it with the payload (run scope aside,
// whose scope id differs per run); when either side refuses, its error
// names the effect (or EmitEvent) and the listener is left waiting as it
// was. Both stores must give the same steps.
func FuzzEventKeysAgree(f *testing.F) {
	f.Add(`"ping"`, `"session"`, `{"a": 1}`, false)
	f.Add(`"ping"`, `"session"`, `{"a": 1}`, true)
	f.Add(`" Ping "`, `" SESSION "`, `{}`, false)
	f.Add(`"a:b:c"`, `"workflow"`, `{}`, true)
	f.Add(`"x"`, `"global"`, `{"k": [1, 2]}`, false)
	f.Add(`"x"`, `"run"`, `{}`, false)
	f.Add(`"ünï"`, `"Workflow"`, `{}`, true)
	f.Add(`5`, `"session"`, `{}`, false)
	f.Add(`"x"`, `null`, `{}`, true)
	f.Add(`"*"`, `"session"`, `{}`, false)
	f.Add(`"x"`, `"sessİon"`, `{}`, false)
	f.Fuzz(func(t *testing.T, nameJSON, scopeJSON, payloadJSON string, external bool) {
		if len(nameJSON)+len(scopeJSON)+len(payloadJSON) > 4096 {
			t.Skip()
		}
		name, err1 := pyjson.Decode([]byte(nameJSON))
		scope, err2 := pyjson.Decode([]byte(scopeJSON))
		payload, err3 := pyjson.DecodeObject([]byte(payloadJSON))
		if err1 != nil || err2 != nil || err3 != nil {
			t.Skip()
		}
		feStoresAgree(t, func(st store.Store) []string { return feEventPlay(t, st, name, scope, payload, external) })
	})
}
