package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// MEMORY_REHYDRATE answers the no-op {inserted:0, skipped:0, artifacts:[]}
// without looking at target_run_id only when it is given no span id value
// at all (spec §3.8 "empty input"). Python core/runtime.py
// _handle_memory_rehydrate tests `if not span_ids` on the raw list
// (`span_ids = list(raw_span_ids)`, or `[raw_span_ids]` for a lone
// span_id): a list holding only values that name no span ([""], [None])
// or a blank span_id is not empty, so Python loads the target run, fails
// "Unknown target_run_id: <id>" when there is none, and otherwise resolves
// the ids (resolve_span_ids_from_spans skips blanks) to nothing and
// answers the same no-op.
func TestMemoryRehydrateBlankSpanIDsStillCheckTarget(t *testing.T) {
	f := memSetup(t, true)
	for _, p := range []map[string]any{
		{"span_ids": []any{""}, "target_run_id": "no-such-run"},
		{"span_ids": []any{nil, "  "}, "target_run_id": "no-such-run"},
		{"span_id": "  ", "target_run_id": "no-such-run"},
	} {
		run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryRehydrate, p))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown target_run_id: no-such-run") {
			t.Errorf("payload %v: status %s error %q result %v, want failed with \"Unknown target_run_id: no-such-run\"",
				p, run.Status, run.Error, run.Vars["r0"])
		}
	}

	// An empty list is the no-op, target unchecked; blank ids on a run
	// that exists resolve to nothing and give the same answer.
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{}, "target_run_id": "no-such-run"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"", " "}}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_id": "  "}),
	)
	mustComplete(t, run)
	for _, i := range []int{0, 2, 3} {
		r, _ := run.Vars[fmt.Sprintf("r%d", i)].(map[string]any)
		arts, _ := r["artifacts"].([]any)
		if r["inserted"] != int64(0) || r["skipped"] != int64(0) || arts == nil || len(arts) != 0 {
			t.Errorf("step %d: result %v, want {inserted:0, skipped:0, artifacts:[]}", i, r)
		}
	}
}
