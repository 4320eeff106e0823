package runtime

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §2.6 step 4's blocked-call merge runs whenever the host's results
// are not as many as the calls, more included: the fixed entries keep
// their indices, the host's results fill the others in order, and those
// left over are dropped.
func TestToolWaitResumeWithMoreResultsIsMerged(t *testing.T) {
	details := map[string]any{
		"mode":                "delegated",
		"original_call_count": int64(2),
		"blocked_by_index":    map[string]any{"0": map[string]any{"call_id": "b0", "success": false, "error": "blocked"}},
	}
	payload := map[string]any{"mode": "executed", "results": []any{
		map[string]any{"call_id": "h0", "success": true},
		map[string]any{"call_id": "h1", "success": true},
		map[string]any{"call_id": "h2", "success": true},
	}}
	got := resumedValue(t, durable.WaitEvent, details, payload)
	m, _ := got.(map[string]any)
	res, _ := m["results"].([]any)
	var ids []any
	for _, r := range res {
		ids = append(ids, r.(map[string]any)["call_id"])
	}
	if len(ids) != 2 || ids[0] != "b0" || ids[1] != "h0" || m["mode"] != "executed" {
		t.Errorf("stored %v (call ids %v); want the results rebuilt as [b0 h0]", got, ids)
	}
}
