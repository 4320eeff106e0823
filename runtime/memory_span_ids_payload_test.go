package runtime_test

// How MEMORY_QUERY and MEMORY_REHYDRATE read span_ids / span_id and the
// query's return mode: each as Python 0.4.28 core/runtime.py reads it.

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// MEMORY_QUERY takes explicit span ids only from a list span_ids, else
// from span_id (Python: `explicit_ids = span_ids_payload if
// isinstance(span_ids_payload, list) else span_id_payload`). A bare
// string span_ids (an LLM calling recall_memory with span_ids="<id>") is
// ignored: the query falls back to its filters, here every note of the
// run.
func TestMemoryQueryBareStringSpanIDsIsNotExplicit(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "first note"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "second note"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": "does-not-exist", "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 2)); len(got) != 2 {
		t.Errorf("span_ids=\"does-not-exist\" (not a list): selected %v; want the filter selection of both notes", got)
	}
}

// MEMORY_REHYDRATE reads span_ids, and the legacy span_id only when
// span_ids is absent or null (Python: `raw_span_ids =
// payload.get("span_ids"); if raw_span_ids is None: raw_span_ids =
// payload.get("span_id")`), a value that is not a list being one id: a
// string span_ids wins over span_id.
func TestMemoryRehydrateStringSpanIDsWinsOverLegacySpanID(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "note A"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "note B"}),
	)
	mustComplete(t, run)
	a := metaOf(t, res(t, run, 0))["span_id"].(string)
	b := metaOf(t, res(t, run, 1))["span_id"].(string)

	run2 := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": a, "span_id": b}),
		// A blank span_ids is given (span_id is not read) and names no span.
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": "", "span_id": b}),
	)
	mustComplete(t, run2)
	r, _ := run2.Vars["r0"].(map[string]any)
	arts, _ := r["artifacts"].([]any)
	if len(arts) != 1 || arts[0].(map[string]any)["span_id"] != a {
		t.Errorf("rehydrate {span_ids: A, span_id: B}: artifacts %v; want only A (%s)", arts, a)
	}
	r1, _ := run2.Vars["r1"].(map[string]any)
	if arts, _ := r1["artifacts"].([]any); r1["inserted"] != int64(0) || len(arts) != 0 {
		t.Errorf("rehydrate {span_ids: \"\", span_id: B}: %v; want the empty no-op", r1)
	}
}

// The query's return mode is Python's str(return or return_mode or
// "rendered"): a falsy return_mode (false, 0, []) is "rendered", not the
// unknown mode "false".
func TestMemoryQueryFalsyReturnModeIsRendered(t *testing.T) {
	for _, v := range []any{false, int64(0), []any{}} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryNote, map[string]any{"note": "hello"}),
			step(durable.EffectMemoryQuery, map[string]any{"return_mode": v}),
		)
		if run.Status != durable.RunCompleted {
			t.Errorf("return_mode %#v: run %s %q; want the rendered recall", v, run.Status, run.Error)
			continue
		}
		if out, _ := res(t, run, 1)["output"].(string); !strings.Contains(out, "note: hello") {
			t.Errorf("return_mode %#v: output %q; want the rendered recall", v, out)
		}
	}
}
