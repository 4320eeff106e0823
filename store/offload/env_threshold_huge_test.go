package offload_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// TestHugeEnvThresholdKeepsValuesInline: ABSTRACTRUNTIME_MAX_INLINE_BYTES
// past the int64 range is read as Python's _default_max_inline_bytes
// (storage/offloading.py) reads it, with an unbounded int(): a huge
// threshold keeps a 300 KiB value inline, and a huge negative one turns
// offloading off. Neither may fall back to the 262144 default.
func TestHugeEnvThresholdKeepsValuesInline(t *testing.T) {
	for _, env := range []string{"99999999999999999999", "-99999999999999999999"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(artifact.EnvMaxInlineBytes, env)
			ctx := context.Background()
			inner := memory.New()
			arts := artifact.NewMemory()
			st := offload.Wrap(inner, arts, offload.Config{})
			if err := st.RunCommit(ctx, &store.CommitParams{Run: newRun(durable.RunRunning), Create: true}); err != nil {
				t.Fatal(err)
			}
			r := &durable.StepRecord{RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
				Result: map[string]any{"content": strings.Repeat("z", 300*1024)}}
			if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{r}); err != nil {
				t.Fatal(err)
			}
			ms, err := arts.ListByRun(ctx, "run-1")
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 0 {
				t.Errorf("threshold %s (Python: that int; nothing this size offloaded): %d artifacts stored, first tagged %v",
					os.Getenv(artifact.EnvMaxInlineBytes), len(ms), ms[0].Tags)
			}
		})
	}
}
