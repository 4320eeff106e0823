package runtime_test

// Edges of the JSON-safe memory effects where ours must write what Python
// writes; each test's comment gives the rule it checks.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// truncateText (builtin_memory_note.go) trims the cut text with
// strings.TrimRight(…, " \t\r\n"); Python's preview[:keep].rstrip()
// strips every Unicode whitespace (U+00A0, U+3000, \v, \f, U+001C…). A
// note whose cut falls right after a no-break space (French typography
// puts one before ':' and '?') gets a note_preview, stored in the span and
// returned in meta, that Python would not write:
//
//	>>> ("a"*146 + "\u00a0" + "b"*20)[:147].rstrip() + "… (truncated)"
//	'aaaa…aaa… (truncated)'
func TestMemoryNotePreviewStripsUnicodeSpaceAsPython(t *testing.T) {
	f := memSetup(t, true)
	note := strings.Repeat("a", 146) + "\u00a0" + strings.Repeat("b", 20)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": note}),
	)
	mustComplete(t, run)
	want := strings.Repeat("a", 146) + "… (truncated)"
	if got := metaOf(t, res(t, run, 0))["note_preview"]; got != want {
		t.Errorf("meta.note_preview = %q, want %q (Python's rstrip() drops the trailing U+00A0)", got, want)
	}
	if got := spansOf(run)[0].(map[string]any)["note_preview"]; got != want {
		t.Errorf("span note_preview = %q, want %q", got, want)
	}
}

// MEMORY_NOTE reads the note as anyText(p["note"]) (JSON text of any
// value); Python reads str(note or "").strip(), so a falsy note (false, 0,
// [], {}) is "" and the effect fails "MEMORY_NOTE requires payload.note
// (non-empty string)". Here such payloads store notes reading "false",
// "0", "[]" and "{}".
func TestMemoryFalsyNoteIsRefused(t *testing.T) {
	for _, v := range []any{false, int64(0), []any{}, map[string]any{}} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryNote, map[string]any{"note": v}),
		)
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, "MEMORY_NOTE requires payload.note (non-empty string)") {
			t.Errorf("note %#v: run %s %q, spans %v; want the effect to fail as Python's (str(note or \"\") is \"\")",
				v, run.Status, run.Error, spansOf(run))
		}
	}
}

// MEMORY_REHYDRATE returns its empty no-op before reading recall_level, so
// an unknown level is accepted when the recall it follows found nothing.
// Python parses recall_level first ("no silent fallback") and fails:
// "Unknown recall_level: bogus".
func TestMemoryRehydrateEmptyStillRefusesUnknownRecallLevel(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{}, "recall_level": "bogus"}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown recall_level: bogus") {
		t.Errorf("run %s %q, r0 %v; want the effect to fail with \"Unknown recall_level: bogus\" as Python's",
			run.Status, run.Error, run.Vars["r0"])
	}
}

// payloadInt converts a number beyond int64 with int64(f), which gives
// math.MinInt64 on amd64 (and is implementation-defined); max(…, 1) then
// makes limit_spans 1. Python's int(1e20) is 10**20: every span matches.
func TestMemoryHugeLimitSpansIsNotOne(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "one"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "two"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "three"}),
		step(durable.EffectMemoryQuery, map[string]any{"limit_spans": json.Number("100000000000000000000"), "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 3)); len(got) != 3 {
		t.Errorf("limit_spans=10**20 selected %d spans (%v), want all 3", len(got), got)
	}
}

// expandConnected loops "for d := 1; d <= hops; d++" over every hop the
// payload asks for, whatever the number of spans, without looking at ctx:
// neighbor_hops: 2**40 with connected=true keeps the tick busy for hours
// (uncancellable) although hops past the number of spans add nothing. The
// result does not depend on hops ≥ len(spans), so bounding the loop keeps
// Python's answer.
func TestMemoryHugeNeighborHopsDoesNotHang(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	steps := []any{
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha", "tags": map[string]any{"topic": "x"}}),
		step(durable.EffectMemoryNote, map[string]any{"note": "beta"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "alpha", "connected": true,
			"neighbor_hops": int64(1) << 40, "return": "meta"}),
	}
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"steps": steps}})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		run *durable.RunState
		err error
	}
	done := make(chan result, 1)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		run, err := f.rt.Tick(tctx, id, runtime.TickOptions{})
		done <- result{run, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		mustComplete(t, r.run)
		if got := spanIDs(t, res(t, r.run, 2)); len(got) != 2 {
			t.Errorf("connected query: %v, want both spans", got)
		}
	case <-time.After(10 * time.Second):
		cancel()
		select {
		case <-done:
			t.Fatal("MEMORY_QUERY with neighbor_hops=2**40 took over 10 s (ended only by the cancel)")
		case <-time.After(2 * time.Second):
			t.Fatal("MEMORY_QUERY with neighbor_hops=2**40 still running after 10 s and ignores its context's cancel")
		}
	}
}

// spanFilter.parse reads since/until as anyText(p[k]): a falsy non-string
// (false, 0, [], {}) becomes the text "false", "0", "[]" or "{}", which is
// no timestamp, and the query fails "memory_query invalid since timestamp:
// false". Python builds a time range only "if since or until" (and reads
// each side as str(x) if x else None), so such a value is no bound and the
// query answers.
func TestMemoryFalsySinceIsNoBound(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryQuery, map[string]any{"since": false, "until": int64(0), "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 {
		t.Errorf("since=false until=0: %v, want the one note", got)
	}
}

// MEMORY_QUERY reads the query as anyText(p["query"]); Python's
// str(query or "").strip() makes a falsy query (false, [], {}) no query at
// all (every span, newest first). Here query=false searches for the text
// "false" (and turns the deep scan on), and finds nothing.
func TestMemoryFalsyQueryIsNoQuery(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": false, "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 {
		t.Errorf("query=false: %v, want the one note (Python: no query)", got)
	}
}

// With a recall_level, MEMORY_REHYDRATE reads max_messages as Python's
// int(float(raw)) and falls back to the level's default (standard: 80),
// without a warning, when that raises: int() of inf or nan does, so they
// are not read as a huge count clamped to the cap (with a warning).
func TestMemoryRehydrateRecallMaxMessagesInfNaNUseDefault(t *testing.T) {
	for _, raw := range []string{"inf", "nan", " -Infinity "} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryRehydrate, map[string]any{
				"span_ids": []any{"no_such_span"}, "recall_level": "standard", "max_messages": raw}),
		)
		mustComplete(t, run)
		r, _ := run.Vars["r0"].(map[string]any)
		eff, _ := r["effort"].(map[string]any)
		applied, _ := eff["applied"].(map[string]any)
		warns, _ := r["warnings"].([]any)
		if got, _ := applied["max_messages"].(int64); got != 80 || len(warns) != 0 {
			t.Errorf("max_messages %q: applied %v, warnings %v; want 80 and no warning", raw, applied["max_messages"], warns)
		}
	}
}

// _handle_memory_note resolves target_run_id ("Unknown target_run_id:
// <id>") and the scope owner ("Unknown memory scope: <s>") before it reads
// the note, so a payload with both an unknown target or scope and an empty
// note reports the target or scope.
func TestMemoryNoteResolvesTargetAndScopeBeforeNote(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "", "target_run_id": "no_such_run"}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown target_run_id: no_such_run") {
		t.Errorf("status %s error %q; want failed \"Unknown target_run_id: no_such_run\"", run.Status, run.Error)
	}
	run = f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": " ", "scope": "bogus"}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown memory scope: bogus") {
		t.Errorf("status %s error %q; want failed \"Unknown memory scope: bogus\"", run.Status, run.Error)
	}
}

// ---------------------------------------------------------------------------
// MEMORY_QUERY has no target_run_id (spec §3.8 lists none; Python's
// _handle_memory_query queries `run`, the requesting run, and its
// session/global owners). A payload carrying one (tool calls often forward
// it to every memory effect) must not switch the query to another run.
//
// Python: run A stores two notes; run B queries {"target_run_id": A,
// "return": "meta"} → meta {"matches": [], "span_ids": []}. Here B gets
// A's two notes.
func TestPyFidelityMemoryQueryIgnoresTargetRunID(t *testing.T) {
	f := memSetup(t, true)
	a := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha note"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "beta note"}))
	mustComplete(t, a)
	b := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"target_run_id": a.RunID, "return": "meta"}))
	mustComplete(t, b)
	if ids := spanIDs(t, res(t, b, 0)); len(ids) != 0 {
		t.Errorf("query of run B with target_run_id=A returned A's spans %v; Python queries B (no matches)", ids)
	}
}

// ---------------------------------------------------------------------------
// MEMORY_QUERY reads the recall level from recall_level, else recallLevel
// (Python: `if recall_level_raw is None: recall_level_raw =
// payload.get("recallLevel")`), as MEMORY_REHYDRATE here already does.
//
// Python: {"recallLevel": "urgent", "return": "meta"} → meta carries
// "effort": {"recall_level": "urgent", "applied": {... "limit_spans": 2 ...}}
// and three clamp warnings. Here the alias is ignored: no effort.
func TestPyFidelityMemoryQueryRecallLevelAlias(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"recallLevel": "urgent", "return": "meta"}))
	mustComplete(t, run)
	meta := metaOf(t, res(t, run, 0))
	eff, _ := meta["effort"].(map[string]any)
	if eff["recall_level"] != "urgent" {
		t.Errorf("meta %v; Python applies recallLevel=urgent (effort.recall_level \"urgent\")", meta)
	}
}

// ---------------------------------------------------------------------------
// MEMORY_QUERY return mode: `str(payload.get("return") or
// payload.get("return_mode") or "rendered")` — a falsy "return" falls
// back to return_mode.
//
// Python: {"return": "", "return_mode": "meta"} → output "" and meta
// {"matches": [], "span_ids": []}. Here the mode is "rendered": output
// "No matching memory spans." and meta null.
func TestPyFidelityMemoryQueryEmptyReturnFallsBackToReturnMode(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"return": "", "return_mode": "meta"}))
	mustComplete(t, run)
	r := res(t, run, 0)
	if r["output"] != "" || r["meta"] == nil {
		t.Errorf("output %q meta %v; Python (return_mode meta): output \"\" and meta {matches: [], span_ids: []}", r["output"], r["meta"])
	}
}

// ---------------------------------------------------------------------------
// parse_recall_level refuses only booleans as "recall_level must be a
// string"; another value is read as str(raw): recall_level 3 fails with
// "Unknown recall_level: 3" (Python: run failed "Effect failed after 1
// attempts: Unknown recall_level: 3"). Here: "recall_level must be a
// string".
func TestPyFidelityMemoryQueryNumericRecallLevelError(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"recall_level": int64(3)}))
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown recall_level: 3") {
		t.Errorf("status %s error %q; Python fails with \"Unknown recall_level: 3\"", run.Status, run.Error)
	}
}

// ---------------------------------------------------------------------------
// Memory writes into an ordinary owner run (target_run_id, or the root run
// of scope "session" without a session id) give up after ~100 ms of the
// owner's lock being held (lockOwner: ownerLockTries × ownerLockPause) and
// fail the effect with "memory owner run … is busy (a step of it is
// executing)". The lock is also held by another memory effect writing the
// same owner (writeOwner holds it across load → commit), so two runs that
// note into the same idle run at the same time fail whenever one commit
// takes longer than that (a loaded database): no step of the owner is
// executing, and nothing conflicts. Python has no such failure.
type slowCommitStore struct {
	store.Store
	slowID string
	delay  func()
}

func (s *slowCommitStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.RunID == s.slowID && s.delay != nil {
		s.delay()
	}
	return s.Store.RunCommit(ctx, p)
}

func TestPyFidelityConcurrentNotesIntoIdleRunDoNotFailBusy(t *testing.T) {
	ss := &slowCommitStore{Store: memory.New()}
	f := memSetupStore(t, ss, true)
	owner := f.runSteps(t, runtime.StartParams{})
	mustComplete(t, owner)
	ss.slowID = owner.RunID
	ss.delay = func() { time.Sleep(250 * time.Millisecond) } // a slow commit of the owner

	results := make(chan *durable.RunState, 2)
	for i := 0; i < 2; i++ {
		go func() {
			results <- f.runSteps(t, runtime.StartParams{},
				step(durable.EffectMemoryNote, map[string]any{"note": fmt.Sprintf("note %d", i), "target_run_id": owner.RunID}))
		}()
	}
	for i := 0; i < 2; i++ {
		run := <-results
		if run.Status != durable.RunCompleted {
			t.Errorf("note into idle run %s: %s %q", owner.RunID, run.Status, run.Error)
		}
	}
	if n := len(spansOf(f.state(t, owner.RunID))); n != 2 {
		t.Errorf("owner has %d spans, want 2", n)
	}
}
