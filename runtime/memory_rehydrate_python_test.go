package runtime_test

// MEMORY_REHYDRATE read as Python reads its inputs, pinned against the
// Python AbstractRuntime 0.4.28 kernel (Runtime with InMemoryRunStore /
// InMemoryLedgerStore / InMemoryArtifactStore, one node repeating the
// listed effects) run on the same workflow. The Python answers are
// hard-coded.

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// MEMORY_REHYDRATE without recall_level hands payload.max_messages to
// ActiveContextPolicy.rehydrate_into_context_from_run
// (memory/active_context.py), which reads it with int(max_messages):
// int(False) is 0, int(True) is 1, int("0_1") is 1 and int("١") (an
// Arabic-Indic digit) is 1. Refusing bools and reading strings with
// strconv.ParseInt ignored these caps and inserted every span.
//
// Python, after two notes "alpha" and "beta", payload
// {"span_ids": [1, 2], "max_messages": true}:
//
//	{"inserted": 1, "skipped": 0, "artifacts": [
//	  {"span_id": <beta>, "inserted": 1, ..., "error": null, "preview": "[MEMORY NOTE]\nbeta"},
//	  {"span_id": <alpha>, "inserted": 0, "skipped": 0, "error": "max_messages", ...}], ...}
//
// and with "max_messages": false both artifacts have "error":
// "max_messages" and "inserted" is 0 (context.messages stays []);
// "0_1" and "١" answer as true does.
func TestMemoryRehydrateMaxMessagesReadAsPythonInt(t *testing.T) {
	for _, tc := range []struct {
		max  any
		want int64
	}{{false, 0}, {true, 1}, {"0_1", 1}, {"\u0661", 1}} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
			step(durable.EffectMemoryNote, map[string]any{"note": "beta"}),
			step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{int64(1), int64(2)}, "max_messages": tc.max}),
		)
		mustComplete(t, run)
		r, _ := run.Vars["r2"].(map[string]any)
		if got, _ := r["inserted"].(int64); got != tc.want {
			t.Errorf("max_messages %#v: inserted %v, want %d (Python int(%#v))", tc.max, r["inserted"], tc.want, tc.max)
			continue
		}
		arts, _ := r["artifacts"].([]any)
		if len(arts) != 2 {
			t.Fatalf("max_messages %#v: artifacts %v", tc.max, arts)
		}
		last, _ := arts[1].(map[string]any)
		if last["error"] != "max_messages" || last["inserted"] != int64(0) {
			t.Errorf("max_messages %#v: second artifact %v, want error \"max_messages\", inserted 0", tc.max, last)
		}
		cx, _ := run.Vars["context"].(map[string]any)
		if msgs, _ := cx["messages"].([]any); int64(len(msgs)) != tc.want {
			t.Errorf("max_messages %#v: %d messages in context, want %d", tc.max, len(msgs), tc.want)
		}
	}
}

// _handle_memory_rehydrate (core/runtime.py) reads a span's kind as
// str(s.get("kind") or "").strip(), so a span whose kind is 7 (or true)
// has kind "7" ("True"), which is not conversation_span/memory_note: it is
// skipped, listed last with that kind and no error. Taking only string
// kinds made such a span kind-less: it was loaded, and reported kind null
// and error "missing_messages" (or was inserted when its artifact held
// messages).
//
// Python, vars._runtime.memory_spans = [{"kind": 7, "artifact_id": "k7",
// "created_at": "2025-01-05T00:00:00+00:00"}], payload {"span_ids": ["k7"]}:
//
//	{"inserted": 0, "skipped": 0, "artifacts": [{"span_id": "k7", "inserted": 0,
//	 "skipped": 0, "error": null, "kind": "7"}], "effort": null, "warnings": null}
//
// and with "kind": true, span_ids [1]: the same with "span_id": "kt",
// "kind": "True".
func TestMemoryRehydrateNonStringSpanKindReadAsPythonStr(t *testing.T) {
	for _, tc := range []struct {
		kind any
		id   string
		ref  any
		want string
	}{{int64(7), "k7", "k7", "7"}, {true, "kt", int64(1), "True"}} {
		f := memSetup(t, true)
		spans := []any{map[string]any{"kind": tc.kind, "artifact_id": tc.id, "created_at": "2025-01-05T00:00:00+00:00"}}
		run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"_runtime": map[string]any{"memory_spans": spans}}},
			step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{tc.ref}}),
		)
		mustComplete(t, run)
		r, _ := run.Vars["r0"].(map[string]any)
		arts, _ := r["artifacts"].([]any)
		if len(arts) != 1 {
			t.Fatalf("kind %#v: artifacts %v", tc.kind, arts)
		}
		a, _ := arts[0].(map[string]any)
		_, hasPreview := a["preview"]
		if a["span_id"] != tc.id || a["kind"] != tc.want || a["error"] != nil || hasPreview {
			t.Errorf("kind %#v: artifact %v; want {span_id: %q, inserted: 0, skipped: 0, error: null, kind: %q} (skipped by kind, as Python)",
				tc.kind, a, tc.id, tc.want)
		}
	}
}
