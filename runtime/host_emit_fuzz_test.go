package runtime_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// FuzzHostEmitEvent: EmitEvent with a fuzzed name, scope, scope ids and
// payload (decoded JSON plus an injected Go value), to two listeners of
// the "evt" workflow (WAIT_EVENT of a fuzzed name and scope, sessions s1
// and s2) and a run waiting on ASK_USER, on both stores. Properties:
//   - a refused emit names what is wrong (the name, the scope, the
//     payload's key path, a missing scope id) and changes no run;
//   - an accepted emit resumes exactly the listeners whose wait key is
//     the event's key (runtime.EventKey of the emit), and returns their
//     ids; each is then completed with the event's payload (normalised)
//     in its envelope, the store holding it, one terminal record, last;
//   - every other run is unchanged (status, version, ledger);
//   - every run exports.
func FuzzHostEmitEvent(f *testing.F) {
	f.Add("ping", "session", "s1", "", []byte(`{"x":1}`), uint8(0), "k", "ping", "session", false)
	f.Add("ping", "", "s2", "", []byte(`{}`), uint8(0), "k", "ping", "", true)
	f.Add(" ping ", "SESSION ", "s1", "", []byte(`{"a":[1,2]}`), uint8(0), "k", "ping", "session", false)
	f.Add("ping", "global", "", "", []byte(`{}`), uint8(0), "k", "ping", "global", true)
	f.Add("ping", "workflow", "", "evt", []byte(`{}`), uint8(0), "k", "ping", "workflow", false)
	f.Add("ping", "session", "s1", "", []byte(`{}`), uint8(2), "inf", "ping", "session", true)
	f.Add("", "session", "s1", "", []byte(`{}`), uint8(0), "k", "ping", "session", false)
	f.Add("ping", "bogus", "s1", "", []byte(`{}`), uint8(0), "k", "ping", "session", false)
	f.Add("ping", "session", "", "", []byte(`{}`), uint8(0), "k", "ping", "session", true)
	f.Add("pi\xffng", "session", "s1", "", []byte(`{}`), uint8(0), "k", "ping", "session", false)
	f.Add("ping", "session", "s1", "", []byte(`[null]`), uint8(13), "m", "ping", "session", true)
	f.Fuzz(func(t *testing.T, name, scope, session, scopeID string, payloadJSON []byte, kind uint8, pkey, waitName, waitScope string, useFile bool) {
		if len(name) > 64 || len(scope) > 32 || len(session) > 32 || len(scopeID) > 32 || len(payloadJSON) > 2048 ||
			len(pkey) > 32 || len(waitName) > 64 || len(waitScope) > 32 {
			t.Skip()
		}
		e := fzNewEnv(t, useFile, fzWorkflows(waitName, waitScope)...)
		ctx := fzCtx(t)
		var ids []string
		for _, s := range []string{"s1", "s2"} {
			id, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "evt", SessionID: s})
			if err != nil {
				t.Fatal(err)
			}
			st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				t.Fatalf("tick of the listener: %v", err)
			}
			if st.Status == durable.RunRunning {
				t.Fatalf("listener with wait (%q, %q) left running", waitName, waitScope)
			}
			if st.Status == durable.RunFailed && st.Error == "" {
				t.Fatalf("listener failed with no error recorded")
			}
			ids = append(ids, id)
		}
		ask, _ := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", SessionID: "s1"})
		if _, err := e.rt.Tick(ctx, ask, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ask)
		before := map[string]fzSnapshot{}
		for _, id := range ids {
			before[id] = fzTake(t, e, id)
		}
		payload := fzDecodeObject(payloadJSON)
		if payload == nil && kind%20 != 0 {
			payload = map[string]any{}
		}
		path, bad := fzInject(payload, "payload", pkey, kind)
		var given any = map[string]any{}
		if payload != nil {
			given = pyjson.Clone(payload)
		}
		p := runtime.EmitParams{Name: name, Scope: scope, SessionID: session, WorkflowID: scopeID, RunID: scopeID, Payload: payload}
		// The event's key, as a listener builds it (an error: the emit
		// must be refused for its name or scope first).
		// Only an empty scope is the default; a blank one (" ") is refused
		// as unknown, by EmitEvent as by a listener's WAIT_EVENT.
		sid := map[string]string{"session": session, "workflow": scopeID, "run": scopeID}
		emitScope := scope
		if emitScope == "" {
			emitScope = "session"
		}
		key, kerr := runtime.EventKey(emitScope, name, sid[pyval.Lower(pyval.Strip(emitScope))])
		got, err := e.rt.EmitEvent(ctx, p)
		if err != nil {
			for _, id := range ids {
				if after := fzTake(t, e, id); after != before[id] {
					t.Fatalf("refused emit (%v) changed run %s: %+v -> %+v", err, id, before[id], after)
				}
			}
			msg := err.Error()
			if kerr == nil && bad && !strings.Contains(msg, path) {
				t.Fatalf("emit with a bad payload value at %s refused naming it not: %v", path, err)
			}
			if !bad && !strings.Contains(msg, "event") && !strings.Contains(msg, "payload") && !strings.Contains(msg, "scope") {
				t.Fatalf("emit refused naming nothing: %v", err)
			}
			for _, id := range ids {
				run := fzState(t, e, id)
				fzExport(t, e, id, len(fzCheckLedger(t, e, run)))
			}
			return
		}
		if kerr != nil {
			t.Fatalf("emit accepted an event whose key is refused (%v)", kerr)
		}
		if bad {
			t.Fatalf("emit accepted a payload with a value that is not JSON at %s", path)
		}
		e.reopen(t)
		for _, id := range ids {
			b := before[id]
			reached := b.status == durable.RunWaiting && b.waitKey == key
			run := fzState(t, e, id)
			recs := fzCheckLedger(t, e, run)
			if slices.Contains(got, id) != reached {
				t.Fatalf("emit of key %q returned %v; run %s waiting on %q reached=%v", key, got, id, b.waitKey, reached)
			}
			if !reached {
				// The JSON-file store's versions restart at 1 when it opens
				// (store/jsonfile: documented), so they are not compared.
				if after := fzTake(t, e, id); after.noVersion() != b.noVersion() {
					t.Fatalf("emit of key %q changed run %s waiting on %q: %+v -> %+v", key, id, b.waitKey, b, after)
				}
			} else {
				if run.Status != durable.RunCompleted {
					t.Fatalf("listener %s ended %s (%s), want completed", id, run.Status, run.Error)
				}
				evt, _ := run.Output["evt"].(map[string]any)
				n, err := pyjson.Normalize(given)
				if err != nil {
					t.Fatalf("accepted payload does not normalise: %v", err)
				}
				if gotP, want := fzCanon(t, evt["payload"]), fzCanon(t, n); gotP != want {
					t.Fatalf("listener %s got payload %s, emitted %s", id, gotP, want)
				}
			}
			fzExport(t, e, id, len(recs))
		}
	})
}
