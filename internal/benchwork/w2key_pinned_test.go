package benchwork

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// keylessWaits is a store that drops the wait key of every waiting run it
// commits, as a kernel that lost the README's user:<run_id>:ask key would
// write it.
type keylessWaits struct{ store.Store }

func (s keylessWaits) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run.Status == durable.RunWaiting && p.Run.Waiting != nil {
		p.Run.Waiting.WaitKey = ""
	}
	return s.Store.RunCommit(ctx, p)
}

// TestW2RequiresTheREADMEWaitKey: W2's tick must leave the run waiting on
// the README's wait key user:<run_id>:ask; a run waiting under any other
// key (here none, which a resume by key would still accept) fails the
// workload rather than being measured.
func TestW2RequiresTheREADMEWaitKey(t *testing.T) {
	env, err := envOn(StoreMemory, keylessWaits{memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	_, err = RunW2(context.Background(), env, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "wait key") {
		t.Fatalf("RunW2 on runs waiting without the user:<id>:ask key: err = %v, want a wait key error", err)
	}
}
