package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Bench runs the shared benchmarks. newStore must return a fresh store
// and register its cleanup on the given b.
func Bench(b *testing.B, newStore func(b *testing.B) store.Store) {
	b.Run("RunCommit", func(b *testing.B) {
		s := newStore(b)
		r := benchRun()
		if err := s.RunCommit(b.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			recs := []*durable.StepRecord{
				newRecord(r.RunID, "llm", durable.StepStarted),
				newRecord(r.RunID, "llm", durable.StepCompleted),
			}
			if err := s.RunCommit(b.Context(), &store.CommitParams{Run: r, Records: recs}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RunGet", func(b *testing.B) {
		s := newStore(b)
		r := benchRun()
		if err := s.RunCommit(b.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.RunGet(b.Context(), r.RunID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LedgerList", func(b *testing.B) {
		s := newStore(b)
		r := benchRun()
		recs := []*durable.StepRecord{
			newRecord(r.RunID, "llm", durable.StepStarted),
			newRecord(r.RunID, "llm", durable.StepCompleted),
		}
		if err := s.RunCommit(b.Context(), &store.CommitParams{Run: r, Create: true, Records: recs}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			got, err := s.LedgerList(b.Context(), &store.LedgerListParams{RunID: r.RunID})
			if err != nil || len(got) != 2 {
				b.Fatalf("LedgerList = %d records, %v", len(got), err)
			}
		}
	})
}

// benchRun returns a run whose JSON is about 1 KB.
func benchRun() *durable.RunState {
	r := newRun("bench-run", runOpts{Session: "sess_1", Actor: "actor_1", Vars: map[string]any{
		"context": map[string]any{"task": "summarise the document", "messages": []any{
			map[string]any{"role": "user", "content": strings.Repeat("lorem ipsum ", 20)},
			map[string]any{"role": "assistant", "content": strings.Repeat("dolor sit amet ", 15)},
		}},
		"_limits": map[string]any{"max_iterations": json.Number("50"), "current_iteration": json.Number("3"),
			"max_tokens": json.Number("32768"), "estimated_tokens_used": json.Number("812")},
		"_runtime":   map[string]any{"provider": "ollama", "model": "qwen3:4b"},
		"scratchpad": map[string]any{"notes": []any{"a", "b", "c"}, "score": json.Number("0.75")},
	}})
	r.Status = durable.RunWaiting
	r.Waiting = keyWait(durable.WaitUser, "user:bench-run:ask")
	r.Waiting.Prompt = "Continue?"
	r.Waiting.Choices = []string{"yes", "no"}
	return r
}
