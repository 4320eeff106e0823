package runtime_test

// Tests that the built-in effects (spec §3.1–§3.9, §1.13, §1.14 and
// the limits API) behave as the Python kernel does, on the inputs where
// the two are most likely to differ.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// varsQueryOut runs one VARS_QUERY step and returns its single tool
// result and, on success, the decoded JSON output.
func varsQueryOut(t *testing.T, f *memFixture, payload map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectVarsQuery, payload))
	mustComplete(t, run)
	r := res(t, run, 0)
	if r["success"] != true {
		return r, nil
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r["output"].(string)), &out); err != nil {
		t.Fatalf("output is not JSON: %v: %q", err, r["output"])
	}
	return r, out
}

// §3.9 / Python _handle_vars_query: the canonical namespaces are ensured on
// the *target* run before the path is resolved, so the default path
// "scratchpad" of a run started without one reads {} instead of failing.
func TestPyVarsQueryTargetRunHasNamespaces(t *testing.T) {
	f := memSetup(t, false)
	ctx := context.Background()
	other, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"x": int64(1)}})
	if err != nil {
		t.Fatal(err)
	}
	r, out := varsQueryOut(t, f, map[string]any{"target_run_id": other})
	if r["success"] != true {
		t.Fatalf("VARS_QUERY of another run's default path failed: %v (want success with value {})", r["error"])
	}
	if out["type"] != "dict" || out["path"] != "scratchpad" {
		t.Fatalf("output %v", out)
	}
}

// §3.9: resolution errors name the location; Python writes "(root)" for
// the top level (resolve_vars_path).
func TestPyVarsQueryRootErrorText(t *testing.T) {
	f := memSetup(t, false)
	r, _ := varsQueryOut(t, f, map[string]any{"path": "nope"})
	if r["success"] != false {
		t.Fatalf("want success false, got %v", r)
	}
	if want := "Missing key 'nope' at (root)"; r["error"] != want {
		t.Fatalf("error %q, want %q", r["error"], want)
	}
}

// §3.9 / Python parse_vars_path: the path is trimmed and empty segments
// are skipped, in the dot form and the JSON-pointer form alike, so
// " scratchpad " and "/scratchpad/" both name the scratchpad.
func TestPyVarsQueryPathNormalisation(t *testing.T) {
	f := memSetup(t, false)
	for _, path := range []string{" scratchpad ", "/scratchpad/"} {
		r, out := varsQueryOut(t, f, map[string]any{"path": path})
		if r["success"] != true {
			t.Errorf("path %q: failed with %v", path, r["error"])
			continue
		}
		if out["type"] != "dict" {
			t.Errorf("path %q: output %v", path, out)
		}
	}
}

// limitsRun starts a chain run and sets its _limits.
func limitsRun(t *testing.T, updates map[string]any) (*fixture, string) {
	t.Helper()
	f := setup(t, chain(2))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rt.UpdateLimits(ctx, id, updates); err != nil {
		t.Fatal(err)
	}
	return f, id
}

// check_limits compares the *unrounded* percentage with warn_*_pct
// (Python: `(tokens_used / max_tokens * 100) >= warn_tokens_pct`); only the
// reported pct is rounded. 26199/32768 = 79.953 % is below an 80 %
// threshold even though it rounds to 80.0.
func TestPyCheckLimitsThresholdUsesUnroundedPct(t *testing.T) {
	f, id := limitsRun(t, map[string]any{
		"estimated_tokens_used": int64(26199), "max_tokens": int64(32768), "warn_tokens_pct": int64(80),
		"current_iteration": int64(0),
	})
	warns, err := f.rt.CheckLimits(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Fatalf("79.95%% of the token budget gave %+v; want no warning below the 80%% threshold", warns)
	}
}

// §1.8: pct = round(current/maximum*100, 1) with Python's round (ties to
// even on the binary value): 1/400 → 0.25 → 0.2, 49/400 → 12.25 → 12.2.
func TestPyLimitPctRoundsLikePython(t *testing.T) {
	f, id := limitsRun(t, map[string]any{"current_iteration": int64(49), "max_iterations": int64(400)})
	st, err := f.rt.GetLimitStatus(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got := st["iterations"].(map[string]any)["pct"]; got != 12.2 {
		t.Errorf("iterations pct = %v, want 12.2 (Python round(12.25, 1))", got)
	}
	// The same rounding in a LimitWarning: 329/400 = 82.25 % → 82.2.
	f2, id2 := limitsRun(t, map[string]any{"estimated_tokens_used": int64(329), "max_tokens": int64(400)})
	warns, err := f2.rt.CheckLimits(context.Background(), id2)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].Pct != 82.2 {
		t.Errorf("warnings %+v, want one tokens warning with pct 82.2", warns)
	}
}

// §3.3 / Python _handle_wait_event: allow_free_text falls back to
// allowFreeText, then to the default true, when it is absent *or null*
// (`aft = payload.get("allow_free_text"); if aft is None: aft =
// payload.get("allowFreeText"); if aft is not None: bool(aft)`).
func TestPyWaitEventNullAllowFreeTextFallsBack(t *testing.T) {
	f := memSetup(t, false)
	for _, tc := range []struct {
		payload map[string]any
		want    bool
	}{
		{map[string]any{"name": "ping", "allow_free_text": nil}, true},
		{map[string]any{"name": "ping", "allow_free_text": nil, "allowFreeText": false}, false},
	} {
		run := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, tc.payload))
		if run.Status != durable.RunWaiting || run.Waiting == nil {
			t.Fatalf("%v: status %s (%s)", tc.payload, run.Status, run.Error)
		}
		if run.Waiting.AllowFreeText != tc.want {
			t.Errorf("payload %v: allow_free_text = %v, want %v", tc.payload, run.Waiting.AllowFreeText, tc.want)
		}
	}
}

// §3.2 / Python _handle_answer_user: `message`, else `text or content`: an
// empty text falls through to content (and with neither the effect fails).
func TestPyAnswerUserEmptyTextFallsBackToContent(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectAnswerUser, map[string]any{"text": "", "content": "hello"}))
	mustComplete(t, run)
	r, _ := run.Vars["r0"].(map[string]any)
	if r["message"] != "hello" {
		t.Errorf("result %v, want message \"hello\" (text is empty, content given)", r)
	}
	run = f.runSteps(t, runtime.StartParams{}, step(durable.EffectAnswerUser, map[string]any{"text": ""}))
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "answer_user requires payload.message") {
		t.Errorf("empty text only: status %s error %q, want failed with \"answer_user requires payload.message\"", run.Status, run.Error)
	}
}

// EMIT_EVENT failures (Python _handle_emit_event): a missing name is
// "emit_event requires payload.name"; a bad scope is "emit_event invalid
// payload: unknown event scope: '<scope>'" (same pattern as WAIT_EVENT's
// "wait_event invalid payload: <msg>", §3.3).
func TestPyEmitEventErrorMessages(t *testing.T) {
	f := memSetup(t, false)
	for _, tc := range []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"payload": map[string]any{}}, "emit_event requires payload.name"},
		{map[string]any{"name": "x", "scope": "planet"}, "emit_event invalid payload: unknown event scope: 'planet'"},
	} {
		run := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectEmitEvent, tc.payload))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, tc.want) {
			t.Errorf("payload %v: status %s error %q, want failed with %q", tc.payload, run.Status, run.Error, tc.want)
		}
	}
}

// §3.5 algorithm step 2: paused runs are skipped *before* the scan that
// collects available_listeners_in_session (Python `continue`s on a paused
// run before looking at its key), so a paused listener is not advertised.
func TestPyEmitEventDiagnosticsSkipPausedListeners(t *testing.T) {
	f := memSetup(t, false)
	ctx := context.Background()
	listener := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, map[string]any{"name": "foo"}))
	if listener.Status != durable.RunWaiting {
		t.Fatalf("listener: %s", listener.Status)
	}
	if _, err := f.rt.Pause(ctx, listener.RunID, "test"); err != nil {
		t.Fatal(err)
	}
	run := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectEmitEvent, map[string]any{"name": "bar"}))
	mustComplete(t, run)
	r, _ := run.Vars["r0"].(map[string]any)
	if avail, ok := r["available_listeners_in_session"]; ok {
		t.Errorf("available_listeners_in_session = %v; a paused listener must not be listed", avail)
	}
}

// §3.6 sync completion with include_traces carries the child's node traces
// (Python: `result["node_traces"] = self.get_node_traces(sub_run_id)`, which
// is {} for a child that executed no effect) — an object, never null.
func TestPySubworkflowIncludeTracesIsAnObject(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "mem", "vars": map[string]any{"steps": []any{}}, "include_traces": true,
	}))
	mustComplete(t, run)
	r, _ := run.Vars["r0"].(map[string]any)
	if _, ok := r["node_traces"].(map[string]any); !ok {
		t.Errorf("node_traces = %#v (in %v), want {} for a child without effects", r["node_traces"], r)
	}
}

// Python's resolve_vars_path messages: a bare or bracketed number indexes a
// list (on an object it is an error, not a key), an index past the end
// gives the list's length, and a key on a scalar names the type found.
func TestPyVarsQueryResolutionMessages(t *testing.T) {
	f := memSetup(t, false)
	ctx := context.Background()
	other, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{
		"obj": map[string]any{"0": "zero"}, "list": []any{"a", map[string]any{"k": "v"}}, "s": "text"}})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"obj.0":        "Expected list at obj but found dict",
		"list[5]":      "Index 5 out of range at list (len=2)",
		"/list/007":    "Index 7 out of range at list (len=2)",
		"s.x":          "Expected object at s but found str",
		"list.1.k.z":   "Expected object at list.1.k but found str",
		"list[1].nope": "Missing key 'nope' at list.1",
	} {
		r, _ := varsQueryOut(t, f, map[string]any{"target_run_id": other, "path": path})
		if r["success"] != false || r["error"] != want {
			t.Errorf("path %q: %v %q, want error %q", path, r["success"], r["error"], want)
		}
	}
	for path, want := range map[string]string{"list[1].k": `"v"`, "obj[0]x": "", "list.0": `"a"`} {
		r, out := varsQueryOut(t, f, map[string]any{"target_run_id": other, "path": path})
		if want == "" { // "obj[0]x": keys "obj", index 0 on a dict
			if r["error"] != "Expected list at obj but found dict" {
				t.Errorf("path %q: %v", path, r)
			}
			continue
		}
		if r["success"] != true {
			t.Errorf("path %q: %v", path, r["error"])
			continue
		}
		if b, _ := json.Marshal(out["value"]); string(b) != want {
			t.Errorf("path %q: value %s, want %s", path, b, want)
		}
	}
}

// ---------------------------------------------------------------------------
// ASK_USER prompt that is not a string: Python stores str(prompt).
//
// Python: ASK_USER {"prompt": ["a"]} waits with "prompt": "['a']";
// {"prompt": {"x": 1}} with "prompt": "{'x': 1}"; {"prompt": true} with
// "prompt": "True". Ours uses fmt.Sprint: "[a]", "map[x:1]", "true".
func TestPyEffectsAskUserNonStringPromptIsPythonStr(t *testing.T) {
	for _, c := range []struct {
		prompt any
		want   string
	}{
		{[]any{"a"}, "['a']"},
		{map[string]any{"x": 1}, "{'x': 1}"},
		{true, "True"},
	} {
		f := newPyFix(t, oneEffectWorkflow("x", durable.EffectAskUser, map[string]any{"prompt": c.prompt})...)
		st := pyStartTick(t, f, "x", runtime.StartParams{})
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("prompt %#v: status %s error %q", c.prompt, st.Status, st.Error)
		}
		if st.Waiting.Prompt != c.want {
			t.Errorf("prompt %#v: waiting.prompt %q; Python: %q", c.prompt, st.Waiting.Prompt, c.want)
		}
	}
}

// ---------------------------------------------------------------------------
// WAIT_EVENT with a truthy non-string name: Python's
// `name = payload.get("name") or payload.get("event_name")` keeps the 5,
// which is not a string, so the effect fails; ours skips the non-string
// name and waits on event_name.
//
// Python: WAIT_EVENT {"name": 5, "event_name": "ev"} -> run "failed",
// error "Effect failed after 1 attempts: wait_event requires
// payload.wait_key or payload.name".
func TestPyEffectsWaitEventNonStringNameDoesNotFallBackToEventName(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"name": 5, "event_name": "ev"})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	want := "Effect failed after 1 attempts: wait_event requires payload.wait_key or payload.name"
	if st.Status != durable.RunFailed || st.Error != want {
		key := ""
		if st.Waiting != nil {
			key = st.Waiting.WaitKey
		}
		t.Fatalf("status %s error %q wait_key %q; Python: failed with %q", st.Status, st.Error, key, want)
	}
}

// ---------------------------------------------------------------------------
// WAIT_EVENT with a whitespace-only scope: Python's build_event_wait_key
// takes str(scope or "session") = "  ", strips it to "" and refuses it as
// an unknown scope; ours reads a blank scope as "session" and waits.
//
// Python: WAIT_EVENT {"name": "ev", "scope": "  "} -> run "failed", error
// "Effect failed after 1 attempts: wait_event invalid payload: unknown
// event scope: '  '".
func TestPyEffectsWaitEventBlankScopeIsUnknown(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"name": "ev", "scope": "  "})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	want := "Effect failed after 1 attempts: wait_event invalid payload: unknown event scope: '  '"
	if st.Status != durable.RunFailed || st.Error != want {
		key := ""
		if st.Waiting != nil {
			key = st.Waiting.WaitKey
		}
		t.Fatalf("status %s error %q wait_key %q; Python: failed with %q", st.Status, st.Error, key, want)
	}
}

// ---------------------------------------------------------------------------
// The unknown-scope error quotes the scope with Python's repr(): a scope
// holding a single quote is shown in double quotes.
//
// Python: WAIT_EVENT {"name": "ev", "scope": ["session"]} -> error
// "Effect failed after 1 attempts: wait_event invalid payload: unknown
// event scope: \"['session']\"". Ours: '['session']'.
func TestPyEffectsWaitEventUnknownScopeErrorUsesRepr(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"name": "ev", "scope": []any{"session"}})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	want := `Effect failed after 1 attempts: wait_event invalid payload: unknown event scope: "['session']"`
	if st.Error != want {
		t.Fatalf("error %q; Python: %q", st.Error, want)
	}
}
