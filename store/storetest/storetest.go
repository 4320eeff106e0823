// Package storetest is the conformance suite every store.Store backend
// runs, plus a few shared benchmarks.
//
// A backend's test file calls Run with a factory returning a fresh,
// isolated store (a new temp directory, schema or database) that registers
// its own cleanup:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir()})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { _ = s.Close() })
//			return s
//		})
//	}
//
// Every concern is its own subtest ("RunCommit/Create", "Ledger/Cursor",
// "Commands/Duplicate"…), runs in parallel with the others and gets its own
// store. Optional abilities (store.LedgerFinder, store.RunClaimer) are
// tested when the store implements them. When the Store contract changes,
// extend this suite rather than one backend's tests.
package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// Run runs the conformance suite. newStore must return a fresh, isolated
// store for each call and register its cleanup on the given t.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name  string
		tests []subtest
	}{
		{"RunCommit", runCommitTests},
		{"RunGet", runGetTests},
		{"RoundTrip", roundTripTests},
		{"RunList", runListTests},
		{"RunIndex", runIndexTests},
		{"RunListDue", runDueTests},
		{"RunListChildren", runChildrenTests},
		{"RunDelete", runDeleteTests},
		{"Ledger", ledgerTests},
		{"Commands", commandTests},
		{"Cursors", cursorTests},
		{"LedgerFinder", ledgerFinderTests},
		{"RunClaimer", claimerTests},
		{"Concurrency", concurrencyTests},
		{"Edges", edgeTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					t.Parallel()
					st.fn(t, newStore(t))
				})
			}
		})
	}
}

// subtest is one named check run against a fresh store.
type subtest struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// base is the fixed instant every fixture time is relative to.
var base = time.Date(2026, 11, 29, 22, 46, 49, 388378000, time.UTC)

// at returns base+d as a durable.Time.
func at(d time.Duration) durable.Time { return durable.NewTime(base.Add(d)) }

// runOpts configures a fixture run; zero fields take defaults.
type runOpts struct {
	Workflow string            // default "wf"
	Status   durable.RunStatus // default running (waiting when Wait is set)
	Wait     *durable.WaitState
	Session  string
	Parent   string
	Actor    string
	Created  time.Duration // offset from base
	Updated  time.Duration // offset from base; default Created
	Vars     map[string]any
}

// newRun builds a run that has not been stored yet (Version 0).
func newRun(id string, o runOpts) *durable.RunState {
	status := o.Status
	if status == "" {
		status = durable.RunRunning
		if o.Wait != nil {
			status = durable.RunWaiting
		}
	}
	wf := o.Workflow
	if wf == "" {
		wf = "wf"
	}
	vars := o.Vars
	if vars == nil {
		vars = map[string]any{"context": map[string]any{"task": "t-" + id}}
	}
	upd := o.Updated
	if upd == 0 {
		upd = o.Created
	}
	return &durable.RunState{
		RunID:       id,
		WorkflowID:  wf,
		Status:      status,
		CurrentNode: "start",
		Vars:        vars,
		Waiting:     o.Wait,
		CreatedAt:   at(o.Created),
		UpdatedAt:   at(upd),
		ActorID:     o.Actor,
		SessionID:   o.Session,
		ParentRunID: o.Parent,
	}
}

// untilWait returns a WAIT_UNTIL wait state.
func untilWait(d time.Duration) *durable.WaitState {
	return &durable.WaitState{Reason: durable.WaitUntil, Until: at(d), ResumeToNode: "next", AllowFreeText: true}
}

// keyWait returns a wait on a key (user, event…), without a deadline.
func keyWait(reason durable.WaitReason, key string) *durable.WaitState {
	return &durable.WaitState{Reason: reason, WaitKey: key, ResumeToNode: "next", AllowFreeText: true}
}

// newRecord builds a ledger record of run runID.
func newRecord(runID, node string, status durable.StepStatus) *durable.StepRecord {
	return &durable.StepRecord{
		RunID:     runID,
		StepID:    randomID(),
		NodeID:    node,
		Status:    status,
		Effect:    &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "hi"}, ResultKey: "_temp.llm"},
		StartedAt: at(time.Second),
		Attempt:   1,
	}
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// create stores a new run, failing the test on error.
func create(t *testing.T, s store.Store, r *durable.RunState, recs ...*durable.StepRecord) {
	t.Helper()
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true, Records: recs}); err != nil {
		t.Fatalf("create %s: %v", r.RunID, err)
	}
}

// commit saves an existing run, failing the test on error.
func commit(t *testing.T, s store.Store, r *durable.RunState, recs ...*durable.StepRecord) {
	t.Helper()
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Records: recs}); err != nil {
		t.Fatalf("commit %s: %v", r.RunID, err)
	}
}

// get loads a run, failing the test on error.
func get(t *testing.T, s store.Store, id string) *durable.RunState {
	t.Helper()
	r, err := s.RunGet(t.Context(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return r
}

// ledger lists a run's whole ledger, failing the test on error.
func ledger(t *testing.T, s store.Store, id string) []*durable.StepRecord {
	t.Helper()
	recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatalf("ledger list %s: %v", id, err)
	}
	return recs
}

// runJSON is the Line encoding of a run, for byte comparisons.
func runJSON(t *testing.T, r *durable.RunState) string {
	t.Helper()
	b, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		t.Fatalf("marshal run: %v", err)
	}
	return string(b)
}

// recordJSON is the Line encoding of a record, for byte comparisons.
func recordJSON(t *testing.T, r *durable.StepRecord) string {
	t.Helper()
	b, err := durable.MarshalRecord(r, pyjson.Line)
	if err != nil {
		t.Fatalf("marshal record: %v", err)
	}
	return string(b)
}

// indexIDs returns the run ids of s.RunIndex(p), in order (never nil).
func indexIDs(t *testing.T, s store.Store, p store.RunIndexParams) []string {
	t.Helper()
	rows, err := s.RunIndex(t.Context(), &p)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range rows {
		out = append(out, r.RunID)
	}
	return out
}

// ids returns the run ids of runs, in order.
func ids(runs []*durable.RunState) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.RunID
	}
	return out
}
