package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// feApplyPlay starts the "fz" workflow asking a person (after its memory
// note), applies eff to the waiting run twice under key, then answers the
// wait; it returns a summary of what happened for the stores' comparison.
func feApplyPlay(t *testing.T, st store.Store, eff *durable.Effect, nodeID, key string, checkValue bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ask := &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "answer"}
	rt := feRuntime(t, st, &feScenario{eff: ask})
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "fz", RunID: feRunID, SessionID: feSession,
		Vars: map[string]any{"context": map[string]any{"messages": conversation(4)}}}); err != nil {
		t.Fatal(err)
	}
	waiting, err := rt.Tick(ctx, feRunID, runtime.TickOptions{})
	if err != nil || waiting.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", waiting, err)
	}
	ledgerLen := func() int {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: feRunID})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	var summary []string
	var first runtime.Outcome
	for i := range 2 {
		what := fmt.Sprintf("apply #%d", i+1)
		n0 := ledgerLen()
		out, aerr := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: feRunID, NodeID: nodeID, Effect: eff.Clone(), IdempotencyKey: key})
		if ctx.Err() != nil {
			t.Fatalf("%s: did not return within its deadline (hang): %v", what, aerr)
		}
		stored := feCheckStored(t, ctx, st, what, nil)
		// The run is left as it was: waiting for its person, at its node.
		if stored.Status != durable.RunWaiting || stored.Waiting == nil || stored.Waiting.WaitKey != waiting.Waiting.WaitKey ||
			stored.CurrentNode != waiting.CurrentNode {
			t.Fatalf("%s (error %v, outcome %s %q): the run is %s at %s (wait %v), want it waiting at %s as before",
				what, aerr, out.Status, out.Error, stored.Status, stored.CurrentNode, stored.Waiting, waiting.CurrentNode)
		}
		if feJSON(stored.Vars["context"]) == "null" {
			t.Fatalf("%s: the run lost its context", what)
		}
		summary = append(summary, fmt.Sprintf("%s: error=%q status=%s outerr=%q result=%s", what, feErr(aerr), out.Status, out.Error, feJSON(out.Result)))
		if aerr != nil {
			if i == 1 && first.Status == runtime.OutcomeCompleted {
				t.Fatalf("%s: the same effect under the same key completed before, now it errs: %v", what, aerr)
			}
			if !strings.Contains(aerr.Error(), "apply effect") {
				t.Fatalf("%s: error %q does not say what failed", what, aerr)
			}
			continue
		}
		switch out.Status {
		case runtime.OutcomeCompleted:
			if checkValue && out.Result != nil {
				if v, _ := feGetPath(stored.Vars, eff.ResultKey); feJSON(v) != feJSON(out.Result) {
					t.Fatalf("%s: completed with %s but the run holds %s at %q", what, feJSON(out.Result), feJSON(v), eff.ResultKey)
				}
			}
		case runtime.OutcomeFailed:
			if strings.TrimSpace(out.Error) == "" {
				t.Fatalf("%s: failed outcome with no error", what)
			}
			if strings.Contains(out.Error, "panic") {
				t.Fatalf("%s: a built-in handler panicked: %s", what, out.Error)
			}
		default:
			t.Fatalf("%s: outcome %q, want completed or failed (no node to resume a wait)", what, out.Status)
		}
		if i == 0 {
			first = out
			continue
		}
		if first.Status == runtime.OutcomeCompleted {
			// A completed record under the key is reused: same result,
			// no new attempt.
			if out.Status != runtime.OutcomeCompleted || feJSON(out.Result) != feJSON(first.Result) {
				t.Fatalf("%s: the same effect under the same key gave %s %s, first %s", what, out.Status, feJSON(out.Result), feJSON(first.Result))
			}
			if grown := ledgerLen() - n0; grown != 0 && !(eff.Type == durable.EffectMemoryCompact && grown <= 2) {
				t.Fatalf("%s: the reused effect added %d ledger records", what, grown)
			}
		}
	}
	// What was durable before (the wait) still answers.
	got, err := rt.Resume(ctx, runtime.ResumeParams{RunID: feRunID, WaitKey: waiting.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
	if err != nil {
		t.Fatalf("resume after the applied effects: %v", err)
	}
	final := feCheckStored(t, ctx, st, "resume", got)
	if final.Status != durable.RunCompleted || feJSON(mapOf(final.Output)["rk"]) != `{"text":"yes"}` {
		t.Fatalf("resume after the applied effects: run %s (error %q) output %s", final.Status, final.Error, feJSON(final.Output))
	}
	recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: feRunID})
	summary = append(summary, feSummary(recs)...)
	summary = append(summary, feJSON(feScrub(pyjson.Clone(final.Vars))))
	return summary
}

// FuzzBuiltinApplyEffect applies a built-in effect (type, payload, result
// key, node id and idempotency key fuzzed) to a run waiting for a person,
// twice, then answers the wait; on the in-memory store and on SQLite.
// Properties: no call hangs; the run is left waiting at its node with its
// wait whatever the effect did (an effect that waits fails, there is no
// node to resume); an error says it is the apply that failed; a failed
// outcome has an error and no handler panicked; a completed result is at
// its result key; the same effect again under the same key reuses a
// completed result (no new attempt); the wait still answers afterwards
// and the run completes with the answer; the ledger has one terminal
// record, last; both stores agree on every outcome, the ledger and vars.
func FuzzBuiltinApplyEffect(f *testing.F) {
	seeds := []struct {
		typ          uint8
		payload, key string
		node, idem   string
	}{
		{1, `{"message": "hi"}`, "_temp.out", "cmd", "command:1"},
		{10, `{"preserve_recent": 2, "compression_mode": "standard"}`, "_temp.command.compact_memory", "compact_memory", "command:compact_memory:c9"},
		{7, `{"note": "n", "tags": {"a": "b"}}`, "note", "note", "command:note"},
		{8, `{"query": "hello"}`, "q", "q", "k"},
		{9, `{"span_id": 1, "tags": {"x": "y"}}`, "t", "t", "k"},
		{11, `{"span_ids": [1]}`, "r", "r", "k"},
		{6, `{"path": "context.messages"}`, "v", "v", "k"},
		{0, `{"prompt": "?"}`, "a", "a", "k"},
		{2, `{"name": "e"}`, "a", "a", "k"},
		{3, `{"until": "2030-01-01T00:00:00Z"}`, "a", "a", "k"},
		{3, `{"until": "2020-01-01T00:00:00Z"}`, "a", "a", "k"},
		{4, `{"name": "e", "payload": [1]}`, "a", "a", "k"},
		{5, `{"workflow_id": "child", "vars": {"x": 2}}`, "sub", "sub", "k"},
		{5, `{"workflow_id": "child", "async": true}`, "sub", "sub", "k"},
		{5, `{"workflow_id": "child", "vars": {"ask": 1}}`, "sub", "sub", "k"},
		{1, `{"message": "x"}`, "", "", ""},
		{1, `{"message": NaN}`, "m", "n", "k"},
	}
	for _, s := range seeds {
		f.Add(s.typ, s.payload, s.key, s.node, s.idem)
	}
	f.Fuzz(func(t *testing.T, typ uint8, payloadJSON, resultKey, nodeID, idem string) {
		if len(payloadJSON) > 4096 || len(resultKey) > 2048 || len(nodeID) > 512 || len(idem) > 512 {
			t.Skip()
		}
		payload, err := pyjson.DecodeObject([]byte(payloadJSON))
		if err != nil {
			t.Skip()
		}
		eff := &durable.Effect{Type: feBuiltinTypes[int(typ)%len(feBuiltinTypes)], Payload: payload, ResultKey: resultKey}
		first, _, _ := strings.Cut(resultKey, ".")
		checkValue := utf8.ValidString(resultKey) && resultKey != "" && !strings.HasPrefix(first, "_") && first != "context" && first != "scratchpad" && first != "answer"
		feStoresAgree(t, func(st store.Store) []string { return feApplyPlay(t, st, eff, nodeID, idem, checkValue) })
	})
}
