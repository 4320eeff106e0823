package runtime

// A run failed by its effect, on a store without atomic commits, killed
// between the ledger append and the state write of the commit that fails
// it: the ledger holds the attempt's records and the terminal status
// event, the run still stands before the effect. The effect's only
// attempt failed: the replay fails the run again without a new attempt
// (the policy's budget holds across a kill; Python re-executes, spec
// §2.11, listed in compatibility.md), and the terminal records already in
// the ledger are not appended twice.

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// killedCommitStore is a store without atomic commits (as the JSON-file
// store when a commit is not staged) whose first commit matching killOn
// lands its ledger records but not the state: a process killed between
// the two writes.
type killedCommitStore struct {
	store.Wrapper
	killOn func(p *store.CommitParams) bool
}

func (s *killedCommitStore) AtomicCommit() bool { return false }

func (s *killedCommitStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.killOn != nil && s.killOn(p) {
		s.killOn = nil
		if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
			return err
		}
		return errors.New("process killed before the state was saved")
	}
	return s.Store.RunCommit(ctx, p)
}

// TestReplayedFailedAttemptKeepsItsEnd: after the replay every STARTED
// record of the effect has its end (same step id) and the terminal status
// event appears once. In "not JSON" the handler also writes a value that
// is not JSON to vars, so the attempt's end is the one failUnserialisable
// closes it with.
func TestReplayedFailedAttemptKeepsItsEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		badVars bool
	}{{"failed", false}, {"not JSON", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			wf := effectThenComplete(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "r"})
			ks := &killedCommitStore{Wrapper: store.Wrapper{Store: memory.New()}}
			ks.killOn = func(p *store.CommitParams) bool {
				for _, r := range p.Records {
					if r.IdempotencyKey == TerminalStatusKey(durable.RunFailed) {
						return true
					}
				}
				return false
			}
			calls := 0
			rt := errRuntime(t, ks, Config{Handlers: map[durable.EffectType]Handler{
				"llm": {Func: func(_ context.Context, req *EffectRequest) (Outcome, error) {
					calls++
					if tc.badVars {
						req.Run.Vars["bad"] = math.NaN()
					}
					return Failed("provider down"), nil
				}},
			}}, wf)
			id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Tick(ctx, id, TickOptions{}); err == nil {
				t.Fatal("the first tick's terminal commit was not killed")
			}
			st, err := rt.Tick(ctx, id, TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != durable.RunFailed || calls != 1 || !strings.Contains(st.Error, "Effect failed after 1 attempts") {
				t.Fatalf("replay: status %s (%q), handler called %d times; want failed again with its attempt's error, no new attempt", st.Status, st.Error, calls)
			}
			recs, err := rt.GetLedger(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			open := map[string]bool{}
			terminal := 0
			var lines []string
			for _, r := range recs {
				lines = append(lines, string(r.Status)+" "+r.StepID+" "+r.IdempotencyKey)
				if strings.HasPrefix(r.IdempotencyKey, "system:terminal_status:") {
					terminal++
				}
				if r.Effect == nil || r.Effect.Type != "llm" {
					continue
				}
				if r.Status == durable.StepStarted {
					open[r.StepID] = true
				} else {
					delete(open, r.StepID)
				}
			}
			if len(open) != 0 || terminal != 1 {
				t.Fatalf("ledger after the replay: STARTED records without an end %v, %d terminal status records (want none and 1):\n%s",
					open, terminal, strings.Join(lines, "\n"))
			}
		})
	}
}
