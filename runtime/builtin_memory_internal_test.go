package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestMemoryNoteRepeatedAttemptDoesNotDuplicate: the span id derives from
// the effect's idempotency key, so an attempt repeated after a crash (its
// owner write already durable) finds its span instead of adding another.
func TestMemoryNoteRepeatedAttemptDoesNotDuplicate(t *testing.T) {
	ctx := context.Background()
	rt, err := New(Config{Store: memory.New(), Artifacts: artifact.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	run := &durable.RunState{RunID: "r1", Vars: map[string]any{}}
	var ids []string
	for i := 0; i < 2; i++ {
		req := &EffectRequest{
			Run:            run,
			Effect:         &durable.Effect{Type: durable.EffectMemoryNote, Payload: map[string]any{"note": "once", "scope": "global"}},
			IdempotencyKey: "key-1",
			Runtime:        rt,
		}
		out, err := handleMemoryNote(ctx, req)
		if err != nil || out.Status != OutcomeCompleted {
			t.Fatalf("attempt %d: %v %+v", i, err, out)
		}
		res := out.Result.(map[string]any)["results"].([]any)[0].(map[string]any)
		ids = append(ids, res["meta"].(map[string]any)["span_id"].(string))
	}
	if ids[0] != ids[1] {
		t.Fatalf("span ids differ: %v", ids)
	}
	owner, err := rt.Store().RunGet(ctx, GlobalMemoryRunID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(spanList(owner)); n != 1 {
		t.Fatalf("owner spans: %d", n)
	}
}

func TestSessionMemoryRunID(t *testing.T) {
	for in, want := range map[string]string{
		"abc-1_2": "session_memory_abc-1_2",
		" abc ":   "session_memory_abc",
		"a b":     "session_memory_sha_" + artifact.BlobID([]byte("a b"))[:32],
	} {
		if got := SessionMemoryRunID(in); got != want {
			t.Errorf("SessionMemoryRunID(%q) = %q, want %q", in, got, want)
		}
	}
}
