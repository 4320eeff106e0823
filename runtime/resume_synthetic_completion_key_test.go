package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// The synthetic TOOL_CALLS completion of a resume goes under the key of
// the waiting record whose wait_key is the one answered (spec §2.6 step
// 5), not under the key of the last waiting tool record: a later waiting
// record of another wait (what a records-first store keeps of a commit
// that was lost) is not the one answered. Taking the last one would leave
// the answered step without its completion, so that a replay runs the
// tools again, and give a step that never got an answer a completion.
func TestSyntheticToolCompletionGoesUnderTheAnsweredWaitsKey(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := errRuntime(t, st, Config{})
	run, _ := toolWaitRun("r-key")
	answered := toolWaitingRecord("r-key", "s1", "key-1", "tool:k")
	stray := toolWaitingRecord("r-key", "s2", "key-2", "tool:other")
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{answered, stray}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: "r-key", WaitKey: "tool:k", MaxSteps: -1,
		Payload: map[string]any{"mode": "executed", "results": []any{"ok"}}}); err != nil {
		t.Fatal(err)
	}
	completed := map[string]int{}
	for _, r := range listLedger(t, st, "r-key") {
		if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
			completed[r.IdempotencyKey]++
		}
	}
	if completed["key-1"] != 1 || completed["key-2"] != 0 {
		t.Fatalf("completed records by key %v; want one under key-1 (the answered wait), none under key-2", completed)
	}
}

// A tool wait without a wait key (a host handler's) gets no synthetic
// completion when answered: spec §2.6 step 5 writes one only for a wait
// that had a key, and a keyless wait cannot name its waiting record.
// Would break if the search ran for keyless waits too: the waiting record
// whose wait has no key would match and be completed.
func TestSyntheticToolCompletionNeedsAWaitKey(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := errRuntime(t, st, Config{})
	run, _ := toolWaitRun("r-nokey")
	run.Waiting.WaitKey = ""
	waiting := toolWaitingRecord("r-nokey", "s1", "key-1", "")
	waiting.Result = map[string]any{"wait": map[string]any{}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{waiting}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: "r-nokey", MaxSteps: -1,
		Payload: map[string]any{"mode": "executed", "results": []any{"ok"}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range listLedger(t, st, "r-nokey") {
		if r.Status == durable.StepCompleted && r.IdempotencyKey == "key-1" {
			t.Fatalf("a keyless tool wait's resume completed its waiting record: %+v", r)
		}
	}
}
