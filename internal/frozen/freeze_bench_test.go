package frozen

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// BenchmarkNewStoredRecord freezes a W1 completion record, as the in-memory
// store does at each commit.
func BenchmarkNewStoredRecord(b *testing.B) {
	now := durable.NewTime(time.Now())
	r := &durable.StepRecord{RunID: "8d0b8f5e-6c1c-4b8e-9a53-3f1e2d7c9b10", StepID: "1d0b8f5e-6c1c-4b8e-9a53-3f1e2d7c9b10", NodeID: "n9",
		Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Attempt: 1,
		Result: map[string]any{"completed": true, "output": map[string]any{"ok": true, "nodes": json.Number("10")}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewStoredRecord(r, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewStoredRun freezes a completed W1 run (its 22 vars and output).
func BenchmarkNewStoredRun(b *testing.B) {
	now := durable.NewTime(time.Now())
	vars := map[string]any{"_limits": map[string]any{"a": json.Number("1"), "b": json.Number("2"), "c": json.Number("3"), "d": json.Number("4"), "e": json.Number("5"), "f": json.Number("6"), "g": json.Number("7"), "h": nil, "i": nil},
		"_runtime": map[string]any{}, "_temp": map[string]any{"prev_node_id": "n8", "prev_next_node": "n9"}}
	for i := range 10 {
		vars["k"+string(rune('0'+i))] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	}
	r := &durable.RunState{RunID: "8d0b8f5e-6c1c-4b8e-9a53-3f1e2d7c9b10", WorkflowID: "bench_w1_chain", Status: durable.RunCompleted,
		CurrentNode: "n9", Vars: vars, Output: map[string]any{"ok": true, "nodes": json.Number("10")}, CreatedAt: now, UpdatedAt: now}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewStoredRun(r); err != nil {
			b.Fatal(err)
		}
	}
}
