package runtime

import (
	"context"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
)

// UpdateVars lets a host change a run's vars (a ref it records under
// vars._runtime, say) the way Pause and UpdateLimits change the run:
// under the run's lock and claim, read-modify-save, so that the change
// waits for a tick in progress instead of making the tick's commit
// conflict (which would drop what the tick did, an effect's outcome
// included, and run that effect again). mutate is given the run's vars
// (never nil) to change in place and reports whether it changed them; it
// may be called again on a fresh load after a conflict. updated_at is
// left as is. Called from within the run's own tick (a node or handler)
// it fails with ErrOwnRunLocked.
func (r *Runtime) UpdateVars(ctx context.Context, runID string, mutate func(vars map[string]any) (bool, error)) error {
	err := r.hostUpdate(ctx, runID, false, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		if run.Vars == nil {
			run.Vars = map[string]any{}
		}
		before := kernelFieldsOf(run)
		changed, err := mutate(run.Vars)
		// The count that scopes the run's idempotency keys stays (a host
		// that replaced _runtime would otherwise have the run's next
		// effects reuse the results of effects made before).
		before.keepEffectSeq(run.Vars)
		return changed, nil, err
	})
	if err != nil {
		return fmt.Errorf("update vars of run %s: %w", runID, err)
	}
	return nil
}
