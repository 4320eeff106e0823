package hashchain_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// halfCommit is a non-atomic store (it embeds the Store interface, hiding
// the memory store's AtomicCommit) whose next RunCommit, once armed, does
// what store/jsonfile does when it has appended the records but cannot
// replace the state file (jsonfile/runs.go: appendRecordsLocked, then
// write fails): the records are durable, the commit returns an error.
type halfCommit struct {
	store.Store
	fail bool
}

func (s *halfCommit) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.fail {
		s.fail = false
		if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
			return err
		}
		return errors.New("injected: saving the run state failed after its records were appended")
	}
	return s.Store.RunCommit(ctx, p)
}

// After a commit that failed once its records were appended, the cached
// head named the record before them: the next commit chained onto it and
// the stored ledger no longer verified. The head is now read again.
func TestChainSurvivesAHalfFailedCommit(t *testing.T) {
	ctx := context.Background()
	inner := &halfCommit{Store: memory.New()}
	s := hashchain.Wrap(inner)
	now := durable.NewTime(time.Now())
	rec := func(step string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "r", StepID: step, NodeID: "n", Status: durable.StepCompleted, StartedAt: now, EndedAt: now}}
	}
	run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: rec("s1")}); err != nil {
		t.Fatal(err)
	}
	inner.fail = true
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Records: rec("s2")}); err == nil {
		t.Fatal("injected failure not returned")
	}
	// The next tick starts over from the stored state and commits again.
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Records: rec("s2-again")}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Fatalf("ledger of %d records does not verify after a half-failed commit: %+v", len(recs), rep.Errors)
	}
}
