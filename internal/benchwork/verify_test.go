package benchwork

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// tamperStore alters what Verify reads back: the run states (run) and
// the ledgers (ledger), as a store holding wrong results would return
// them. It is installed as the counting wrapper's inner store once the
// workload has run (Verify only reads runs and ledgers).
type tamperStore struct {
	store.Store
	run    func(*durable.RunState)
	ledger func([]*durable.StepRecord) []*durable.StepRecord
}

func (s *tamperStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	st, err := s.Store.RunGet(ctx, runID)
	if err == nil && s.run != nil {
		s.run(st)
	}
	return st, err
}

func (s *tamperStore) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	recs, err := s.Store.LedgerList(ctx, p)
	if err == nil && s.ledger != nil {
		recs = s.ledger(recs)
	}
	return recs, err
}

// TestVerifyCatchesWrongResults: Verify's doc promises it checks status,
// output, the workload's vars (W1 k0…k9 at n9, W2 answer, W3 woke, W3b
// no woke) and a ledger of seqs 1…n ending with the terminal
// "completed" status event, and the README says a workload whose checks
// fail never prints a number. Each case stores one wrong result in
// otherwise good runs and Verify must fail naming the run.
func TestVerifyCatchesWrongResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a W3b wait (250 ms)")
	}
	for _, tc := range []struct {
		name, workload, want string
		run                  func(*durable.RunState)
		ledger               func([]*durable.StepRecord) []*durable.StepRecord
	}{
		{name: "ledger seq gap", workload: W1Chain, want: "seq",
			ledger: func(r []*durable.StepRecord) []*durable.StepRecord { r[len(r)-1].Seq++; return r }},
		{name: "last record is another terminal status", workload: W1Chain, want: "terminal status",
			ledger: func(r []*durable.StepRecord) []*durable.StepRecord {
				r[len(r)-1].IdempotencyKey = "system:terminal_status:failed"
				return r
			}},
		{name: "wrong output", workload: W1Chain, want: "output",
			run: func(st *durable.RunState) { st.Output["nodes"] = int64(9) }},
		{name: "w1 ended at another node", workload: W1Chain, want: "n8",
			run: func(st *durable.RunState) { st.CurrentNode = "n8" }},
		{name: "w2 answer var", workload: W2AskResume, want: "vars.answer",
			run: func(st *durable.RunState) { st.Vars["answer"] = map[string]any{"text": "no"} }},
		{name: "w3 woke var", workload: W3Past, want: "vars.woke",
			run: func(st *durable.RunState) {
				st.Vars["woke"] = map[string]any{"ready": true, "until": "2001-01-01T00:00:00+00:00"}
			}},
		{name: "w3b wrote woke", workload: W3Due, want: "vars.woke",
			run: func(st *durable.RunState) { st.Vars["woke"] = map[string]any{"ready": true} }},
	} {
		t.Run(tc.name, func(t *testing.T) { wantTamperedRefused(t, tc.workload, tc.run, tc.ledger, tc.want) })
	}
}

// wantTamperedRefused makes two runs of workload, checks that they
// verify, then has the store hand back what run and ledger make of the
// first one, and wants Verify to fail naming that run and want.
func wantTamperedRefused(t *testing.T, workload string, run func(*durable.RunState),
	ledger func([]*durable.StepRecord) []*durable.StepRecord, want string) {
	t.Helper()
	ctx := context.Background()
	env := memoryEnv(t)
	out, err := Run(ctx, env, workload, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, env, out); err != nil {
		t.Fatalf("untouched runs: %v", err)
	}
	env.Store.inner = &tamperStore{Store: env.Store.inner, run: run, ledger: ledger}
	_, err = Verify(ctx, env, out)
	if err == nil || !strings.Contains(err.Error(), out.RunIDs[0]) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Verify of a %s with a wrong result: err = %v, want an error naming run %s and %q",
			workload, err, out.RunIDs[0], want)
	}
}

// TestVerifyW4ComparesRecordsRead: for W4, Verify re-reads each ledger
// and checks that the timed loop read as many records (its doc); steps
// are the records read, so a loop that missed records would report an
// inflated or deflated steps_per_s.
func TestVerifyW4ComparesRecordsRead(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	w1, err := RunW1(ctx, env, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	w4, err := RunW4(ctx, env, w1.RunIDs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, env, w4); err != nil {
		t.Fatalf("untouched W4: %v", err)
	}
	w4.Steps--
	if _, err := Verify(ctx, env, w4); err == nil || !strings.Contains(err.Error(), "w4") {
		t.Fatalf("W4 that read %d records of %d: err = %v, want a w4 error", w4.Steps, w4.Steps+1, err)
	}
}

// TestVerifyRefusesAnOutcomeWithoutRuns: an outcome with no runs has
// nothing verified and its per-run figures would divide by zero; Verify
// must fail rather than pass it on to become a JSON line.
func TestVerifyRefusesAnOutcomeWithoutRuns(t *testing.T) {
	env := memoryEnv(t)
	if _, err := Verify(context.Background(), env, &Outcome{Workload: W1Chain}); err == nil {
		t.Fatal("Verify passed an outcome without runs")
	}
}
