package benchwork

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestCountsArithmetic: Commits is RunCommit + LedgerAppend + RunClaim +
// RunRelease (the doc: each one SQLite transaction), Sub subtracts every
// counter (file writes included: file_writes_per_run comes from a
// difference of snapshots), and PerRun lists only the non-zero calls.
func TestCountsArithmetic(t *testing.T) {
	var c Counts
	c.Ops[OpRunCommit], c.Ops[OpLedgerAppend], c.Ops[OpRunClaim], c.Ops[OpRunRelease] = 10, 4, 2, 2
	c.Ops[OpRunGet] = 30
	c.RecordsAppended, c.FileWrites, c.StoreTime = 9, 14, 5*time.Second
	if got := c.Commits(); got != 18 {
		t.Errorf("Commits() = %d, want 10+4+2+2 = 18", got)
	}
	var o Counts
	o.Ops[OpRunCommit], o.Ops[OpRunGet] = 2, 6
	o.RecordsAppended, o.FileWrites, o.StoreTime = 1, 4, time.Second
	d := c.Sub(o)
	if d.Ops[OpRunCommit] != 8 || d.Ops[OpRunGet] != 24 || d.RecordsAppended != 8 || d.FileWrites != 10 || d.StoreTime != 4*time.Second {
		t.Errorf("Sub: %+v", d)
	}
	per := d.PerRun(2)
	want := map[string]float64{"run_commit": 4, "run_get": 12, "ledger_append": 2, "run_claim": 1, "run_release": 1}
	if !reflect.DeepEqual(per, want) {
		t.Errorf("PerRun(2) = %v, want only the non-zero calls %v", per, want)
	}
}

// nopStore accepts the writes the counting wrapper forwards.
type nopStore struct{ store.Store }

func (nopStore) RunCommit(context.Context, *store.CommitParams) error { return nil }

func (nopStore) LedgerAppend(context.Context, string, []*durable.StepRecord) error {
	return nil
}

// TestCountingFileWrites: Counts.FileWrites is one run-file replacement
// per RunCommit plus one ledger append per call that carries records
// (the doc), the basis of file_writes_per_run.
func TestCountingFileWrites(t *testing.T) {
	ctx := context.Background()
	st, c := Wrap(nopStore{})
	rec := []*durable.StepRecord{{}, {}}
	for _, call := range []func() error{
		func() error { return st.RunCommit(ctx, &store.CommitParams{}) },             // 1
		func() error { return st.RunCommit(ctx, &store.CommitParams{Records: rec}) }, // 2
		func() error { return st.LedgerAppend(ctx, "r", rec) },                       // 1
		func() error { return st.LedgerAppend(ctx, "r", nil) },                       // 0
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	s := c.Snapshot()
	if s.FileWrites != 4 || s.RecordsAppended != 4 || s.Commits() != 4 {
		t.Errorf("file writes %d (want 4), records %d (want 4), commits %d (want 4)", s.FileWrites, s.RecordsAppended, s.Commits())
	}
}

// TestOpsPerRunKeysAreStable: ops_per_run's keys are JSON names compared
// across runs of the bench and with the peer's table of saves, loads and
// lists; renaming one (run_list_due → anything else) would silently split
// a published column in two.
func TestOpsPerRunKeysAreStable(t *testing.T) {
	want := []string{"run_commit", "run_get", "run_list", "run_list_due", "run_next_due",
		"run_list_children", "run_index", "run_delete", "ledger_append", "ledger_list", "ledger_count",
		"ledger_delete", "ledger_find_completed", "run_claim", "run_release", "command"}
	var c Counts
	for i := range c.Ops {
		c.Ops[i] = 1
	}
	per := c.PerRun(1)
	if len(per) != len(want) {
		t.Errorf("ops_per_run has %d keys %v, want %d", len(per), per, len(want))
	}
	for _, k := range want {
		if per[k] != 1 {
			t.Errorf("ops_per_run[%q] = %v, want 1 (keys %v)", k, per[k], per)
		}
	}
}
