package runtime_test

// On a non-atomic store (a HalfCommit) a run's terminal status record is
// appended once, even when the ledger look-up that dedupes it fails. The
// test's comment describes, in the present tense, the code before the fix.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

var errKCInjectedRead = errors.New("injected: reading the ledger failed")

// kcFlakyLedger is a non-atomic store (a HalfCommit, as the JSON-file
// store behaves) whose next ledger read fails when armed.
type kcFlakyLedger struct {
	*storetest.HalfCommit
	failList atomic.Bool
}

func (s *kcFlakyLedger) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.failList.CompareAndSwap(true, false) {
		return nil, errKCInjectedRead
	}
	return s.HalfCommit.LedgerList(ctx, p)
}

func kcTerminalRecords(t *testing.T, rt *runtime.Runtime, id string) int {
	t.Helper()
	recs, err := rt.GetLedger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if strings.HasPrefix(r.IdempotencyKey, "system:terminal_status:") {
			n++
		}
	}
	return n
}

// On a non-atomic store, finish (session.go) looks the terminal record up
// in the ledger so that a replay after a half commit does not append it
// twice. When that look-up fails, finish returns the error with the
// terminal state and its records still pending, and steps() (tick.go)
// then flushes them anyway: the terminal state is committed while Tick
// reports an error, without the dedupe check, so a replay after a half
// commit ends with two terminal status records (docs/compatibility.md:
// "never appended twice on replay"), and afterTerminal is skipped.
func TestCoreTerminalDedupeReadErrorStillCommits(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	st := &kcFlakyLedger{HalfCommit: &storetest.HalfCommit{Store: memory.New(), FailAt: 1}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	// Tick 1: the terminal commit appends its records, then fails to save
	// the state (a JSON-file store that cannot replace the state file).
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, storetest.ErrHalfCommit) {
		t.Fatalf("tick 1: %v", err)
	}
	if n := kcTerminalRecords(t, rt, id); n != 1 {
		t.Fatalf("after the half commit: %d terminal records", n)
	}
	// Tick 2 replays the node; the ledger look-up of finish fails once.
	st.failList.Store(true)
	_, err2 := rt.Tick(ctx, id, runtime.TickOptions{})
	run, _ := rt.GetState(ctx, id)
	n := kcTerminalRecords(t, rt, id)
	t.Logf("tick 2 error: %v; stored status %s; %d terminal records", err2, run.Status, n)
	if err2 != nil && run.Status.Terminal() {
		t.Errorf("tick 2 returned an error (%v) but committed the terminal state", err2)
	}
	// Whatever tick 2 did, a further tick must leave exactly one record.
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatalf("tick 3: %v", err)
	}
	if n := kcTerminalRecords(t, rt, id); n != 1 {
		t.Errorf("%d terminal status records, want 1", n)
	}
}
