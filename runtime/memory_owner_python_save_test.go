package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Spec §1.13: "Synthetic owners are created on demand with status:
// completed, current_node: "done", vars: {context:{task:"",messages:[]},
// scratchpad:{}, _runtime:{memory_spans:[]}, _temp:{}, _limits:{}},
// output: {messages: []}" (the span a note appends then lands in
// _runtime.memory_spans). docs/compatibility.md lists
// vars._runtime.python_save as "written only on runs the Python runtime
// saved". A session or global owner this runtime creates and writes again
// holds no python_save key: one was noted, as if Python had saved the new
// owner last (it has no effect_seq, being never ticked).
func TestSyntheticMemoryOwnerHasNoPythonSaveKey(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{SessionID: "s1"},
		step(durable.EffectMemoryNote, map[string]any{"note": "hello", "scope": "session"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "g", "scope": "global"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "again", "scope": "session"}),
	)
	mustComplete(t, run)
	for _, id := range []string{"session_memory_s1", runtime.GlobalMemoryOwnerID()} {
		o, err := f.st.RunGet(t.Context(), id)
		if err != nil {
			t.Fatalf("owner %s: %v", id, err)
		}
		rt, _ := o.Vars["_runtime"].(map[string]any)
		var keys []string
		for k := range rt {
			keys = append(keys, k)
		}
		if _, has := rt["python_save"]; has || len(rt) != 1 {
			t.Errorf("synthetic owner %s: vars._runtime keys %v (python_save=%v); want only memory_spans (spec §1.13)",
				id, keys, rt["python_save"])
		}
	}
}
