package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// Promise: START_SUBWORKFLOW treats a Start error that is "an answer (an
// identity conflict, vars that are not JSON, an invalid id)" as a failed
// effect, because "the same request fails the same way again"; only a
// store failure whose create "may have landed" interrupts the tick so the
// replay asks for the child again (runtime/builtin_subworkflow.go,
// handleStartSubworkflow, the comments of its Start error branch).
// payload.run_id naming an id the store refuses outright (jsonfile: a '/'
// in it, store/jsonfile checkID "invalid run id"; or a name too long for
// a file) must fail the effect. Start (runtime/start.go) wrapped every
// RunCommit error as storeFailure, so the tick was interrupted at the same
// node again and again and the parent stayed running for ever without a
// record of why. Stores say store.ErrInvalidID,
// which Start passes on as an answer.
func TestSubworkflowNamingAChildIDTheStoreRefusesFails(t *testing.T) {
	for name, childID := range map[string]string{
		"slash":    "bad/child",
		"too-long": strings.Repeat("c", 300), // run_<id>.json past NAME_MAX
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			parent, child := retryChildWorkflows(map[string]any{"run_id": childID})
			reg, err := runtime.NewRegistry(parent, child)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
				Handlers: map[durable.EffectType]runtime.Handler{"flaky": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
					return runtime.Completed(map[string]any{}), nil
				}}}})
			if err != nil {
				t.Fatal(err)
			}
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				got, err := rt.Tick(ctx, id, runtime.TickOptions{})
				if err == nil && got.Status.Terminal() {
					if got.Status != durable.RunFailed {
						t.Fatalf("parent %s (%q), want failed: the child id is refused", got.Status, got.Error)
					}
					return
				}
				if i == 3 {
					status := "<nil>"
					if got != nil {
						status = string(got.Status)
					}
					t.Fatalf("tick %d: parent %s, error %v; want the START_SUBWORKFLOW effect failed (an id the store "+
						"refuses is an answer), not the tick interrupted again and again with the parent left running",
						i, status, err)
				}
			}
		})
	}
}
