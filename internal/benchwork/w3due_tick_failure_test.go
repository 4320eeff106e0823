package benchwork

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failOnceStore is a memory store whose first commit of a completed
// W3b run fails: a scheduler tick of phase B that errors.
type failOnceStore struct {
	*memory.Store
	failed atomic.Bool
}

func (s *failOnceStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run.WorkflowID == WorkflowW3Due && p.Run.Status == durable.RunCompleted && s.failed.CompareAndSwap(false, true) {
		return errors.New("injected commit failure")
	}
	return s.Store.RunCommit(ctx, p)
}

// TestW3DueRefusesASampleWithAFailedSchedulerTick: a scheduler tick that
// fails in phase B (here one commit, which the next poll may retry) makes
// the sample an error: its seconds would include a failed tick and its
// cycles a retry. Dropping RunW3Due's RunsFailed check would let the
// sample through as a figure.
func TestW3DueRefusesASampleWithAFailedSchedulerTick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a W3b wait (250 ms)")
	}
	ctx := context.Background()
	inner := &failOnceStore{Store: memory.New()}
	env := schedulerEnv(t, inner, nil)

	out, err := RunW3Due(ctx, env, 2, &Stopwatch{})
	if !inner.failed.Load() {
		t.Fatal("setup: no commit of a completed W3b run was made")
	}
	if err == nil || !strings.Contains(err.Error(), "scheduler ticks failed") {
		t.Fatalf("W3b with a failed scheduler tick: outcome %+v, err %v; want the failed ticks reported as an error", out, err)
	}
}
