package runtime_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// FuzzHostStartVars: Start with vars decoded from fuzzed JSON plus a Go
// value a host could pass at a fuzzed key, on the in-memory or the
// JSON-file store. Properties:
//   - a value that is not JSON (NaN, ±Inf, a channel, a func, an error)
//     is refused with an error naming its key path, and nothing is stored;
//   - any other refusal also names the key path it is about, and nothing
//     is stored;
//   - an accepted run reads back through the store running at the entry
//     node, with every caller var equal (canonical JSON) to the normalised
//     value given; a repeated Start with the same explicit id is
//     idempotent (same id, no error, nothing changed);
//   - ticked, the run completes with exactly one terminal record, last,
//     survives a reopen of the JSON-file store, and exports.
func FuzzHostStartVars(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,null,"x"]}`), uint8(0), "k", "", false)
	f.Add([]byte(`{"a":1}`), uint8(1), "bad", "run-1", true)
	f.Add([]byte(`{"_limits":3,"_runtime":"x","_meta":[]}`), uint8(5), "typed", "r", false)
	f.Add([]byte(`[1,2]`), uint8(9), "big", "", true)
	f.Add([]byte(`{"x":{"y":{"z":1e308}}}`), uint8(14), "deep", "d", true)
	f.Add([]byte(`{"n":-0.0,"e":1E+2}`), uint8(7), "num", "n", false)
	f.Add([]byte(`not json`), uint8(8), "nn", "x.y", true)
	f.Fuzz(func(t *testing.T, data []byte, kind uint8, key, runID string, useFile bool) {
		if len(data) > 4096 || len(key) > 64 || len(runID) > 64 {
			t.Skip()
		}
		e := fzNewEnv(t, useFile)
		ctx := fzCtx(t)
		vars := fzDecodeObject(data)
		if vars == nil {
			vars = map[string]any{}
		}
		path, bad := fzInject(vars, "vars", key, kind)
		injected := path != ""
		given := pyjson.Clone(vars) // the caller's vars, before Start
		p := runtime.StartParams{WorkflowID: "echo", Vars: vars, RunID: runID}
		id, err := e.rt.Start(ctx, p)
		e.checkConfined(t, "start")
		if err != nil {
			if id != "" && (runID == "" || errors.Is(err, store.ErrInvalidID)) {
				t.Fatalf("Start failed (%v) but returned id %q", err, id)
			}
			msg := err.Error()
			switch {
			case !utf8.ValidString(runID) && strings.Contains(msg, "run_id"):
			case runID != "" && errors.Is(err, store.ErrInvalidID):
				if !strings.Contains(msg, strconv.Quote(runID)) && !strings.Contains(msg, runID) {
					t.Fatalf("run id %q refused with an error that does not name it: %v", runID, err)
				}
			case injected && strings.Contains(msg, path):
			case injected && utf8.ValidString(key):
				t.Fatalf("Start refused vars with an injected %T at %s, error not naming it: %v", vars[key], path, err)
			case !injected && !strings.Contains(msg, "vars"):
				t.Fatalf("Start refused JSON vars with an error naming no path: %v", err)
			}
			if runID != "" && !errors.Is(err, store.ErrInvalidID) {
				if _, gerr := e.st.RunGet(ctx, runID); !errors.Is(gerr, store.ErrNotFound) {
					t.Fatalf("Start failed (%v) but run %q is stored (get: %v)", err, runID, gerr)
				}
			}
			runs, lerr := e.st.RunList(ctx, &store.RunListParams{})
			if lerr != nil || len(runs) != 0 {
				t.Fatalf("Start failed (%v) but the store holds %d runs (%v)", err, len(runs), lerr)
			}
			return
		}
		if bad {
			t.Fatalf("Start accepted a value that is not JSON at %s (%T)", path, vars[key])
		}
		if runID != "" && id != runID {
			t.Fatalf("Start with run id %q returned %q", runID, id)
		}
		run := fzState(t, e, id)
		if run.Status != durable.RunRunning || run.CurrentNode != "a" || run.WorkflowID != "echo" {
			t.Fatalf("started run is %s at %q of %q", run.Status, run.CurrentNode, run.WorkflowID)
		}
		for k, v := range given.(map[string]any) {
			switch k {
			case "_limits", "_runtime", "_meta":
				continue // the runtime's namespaces
			}
			n, err := pyjson.Normalize(v)
			if err != nil {
				t.Fatalf("Start accepted vars.%s = %#v that does not normalise: %v", k, v, err)
			}
			// A key that is not UTF-8 is stored repaired, U+FFFD for each
			// bad byte (docs/compatibility.md).
			if got, want := fzCanon(t, run.Vars[fzRepaired(k)]), fzCanon(t, n); got != want {
				t.Fatalf("vars.%s stored as %s, given %s", k, got, want)
			}
		}
		if runID != "" {
			again, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "echo", Vars: given.(map[string]any), RunID: runID})
			if err != nil || again != id {
				t.Fatalf("repeated Start of run %q: %q, %v; want the same id, no error", runID, again, err)
			}
			if run2 := fzState(t, e, id); run2.Version != run.Version {
				t.Fatalf("repeated Start changed run %q: version %d -> %d", id, run.Version, run2.Version)
			}
		}
		st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatalf("tick of run %q: %v", id, err)
		}
		if st.Status != durable.RunCompleted {
			t.Fatalf("echo run %q ended %s: %s", id, st.Status, st.Error)
		}
		e.reopen(t)
		run = fzState(t, e, id)
		if run.Status != st.Status || fzCanon(t, run.Output) != fzCanon(t, st.Output) {
			t.Fatalf("run %q stored %s %v, tick returned %s %v", id, run.Status, run.Output, st.Status, st.Output)
		}
		recs := fzCheckLedger(t, e, run)
		fzExport(t, e, id, len(recs))
	})
}

// FuzzHostStartIdentity: explicit run ids and the actor, session and
// parent fields, on both stores. Properties:
//   - an id the store cannot keep (empty is the random-id case; slashes,
//     NUL, ".", "..", non-UTF-8, too long for a file name) is refused with
//     an error wrapping store.ErrInvalidID (or naming the field that is not
//     UTF-8), naming what is wrong, and nothing is written outside the
//     JSON-file store's directory;
//   - an accepted run reads back (after a reopen too) with its id, actor,
//     parent as given and its session trimmed; it waits on ASK_USER, is
//     resumed with its key, completes with one terminal record, and
//     exports under its id.
func FuzzHostStartIdentity(f *testing.F) {
	f.Add("run-1", "actor", " s1 ", "", true)
	f.Add("a/b", "", "", "", true)
	f.Add("..", "", "", "", true)
	f.Add(".", "x", "s", "p", true)
	f.Add(" padded ", "", "", "", true)
	f.Add("x\xff", "", "", "", false)
	f.Add("ok", "\xfe", "", "", true)
	f.Add("ok", "", "", "par\x00ent", true)
	f.Add(strings.Repeat("L", 240), "", "", "", true)
	f.Add("run.json", "", "", "", true)
	f.Add("\\..\\x", "", "", "", true)
	f.Fuzz(func(t *testing.T, runID, actor, session, parent string, useFile bool) {
		if len(runID) > 300 || len(actor) > 64 || len(session) > 64 || len(parent) > 64 {
			t.Skip()
		}
		e := fzNewEnv(t, useFile)
		ctx := fzCtx(t)
		id, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", RunID: runID,
			ActorID: actor, SessionID: session, ParentRunID: parent})
		e.checkConfined(t, "start")
		if err != nil {
			msg := err.Error()
			named := false
			for _, c := range []struct{ field, v string }{{"run_id", runID}, {"actor_id", actor}, {"session_id", session}, {"parent_run_id", parent}} {
				if !utf8.ValidString(c.v) && strings.Contains(msg, c.field) {
					named = true
				}
			}
			if !named && !errors.Is(err, store.ErrInvalidID) {
				t.Fatalf("Start(id %q, actor %q, session %q, parent %q) refused without naming the field or ErrInvalidID: %v", runID, actor, session, parent, err)
			}
			if !named && !strings.Contains(msg, "run id") && !strings.Contains(msg, "parent") && !strings.Contains(msg, "id") {
				t.Fatalf("refusal names no id: %v", err)
			}
			if runs, _ := e.st.RunList(ctx, &store.RunListParams{}); len(runs) != 0 {
				t.Fatalf("Start failed (%v) but the store holds %d runs", err, len(runs))
			}
			return
		}
		if runID != "" && id != runID {
			t.Fatalf("Start with id %q returned %q", runID, id)
		}
		st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil || st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("tick of run %q: %v, status %v", id, err, st)
		}
		e.reopen(t)
		run := fzState(t, e, id)
		if run.ActorID != actor || run.SessionID != pyval.Strip(session) || run.ParentRunID != parent {
			t.Fatalf("run %q stored actor %q session %q parent %q; given %q %q %q", id, run.ActorID, run.SessionID, run.ParentRunID, actor, session, parent)
		}
		if run.Status != durable.RunWaiting || run.Waiting == nil || run.Waiting.WaitKey != st.Waiting.WaitKey {
			t.Fatalf("run %q stored %s, tick returned waiting on %q", id, run.Status, st.Waiting.WaitKey)
		}
		st, err = e.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
		if err != nil || st.Status != durable.RunCompleted {
			t.Fatalf("resume of run %q: %v, %v", id, err, st)
		}
		e.reopen(t)
		run = fzState(t, e, id)
		if run.Status != durable.RunCompleted {
			t.Fatalf("run %q stored %s after its completion", id, run.Status)
		}
		recs := fzCheckLedger(t, e, run)
		for _, r := range recs {
			if r.ActorID != actor {
				t.Fatalf("run %q record %d actor %q, run's %q", id, r.Seq, r.ActorID, actor)
			}
		}
		fzExport(t, e, id, len(recs))
		e.checkConfined(t, "run")
	})
}

func fzRepaired(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
