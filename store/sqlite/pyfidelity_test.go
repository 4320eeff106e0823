package sqlite_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A database this store migrated, then written by Python 0.4.28 again (a
// downgrade, or a Python tool on a Shared store): SqliteRunStore.save and
// SqliteLedgerStore.append write json.dumps(..., allow_nan=True) text, here
// a run waiting on an event whose vars hold NaN and a completed record
// whose result holds NaN (pyNaNRun / pyNaNRec). The triggers of
// migration 012 fill runs.wait_key and ledger.completed_key only WHEN
// json_valid(NEW.run_json) (strict JSON, false with NaN), and nothing
// filled them later (migration 011's JSON5 back-fill ran once, before these
// rows), so even after reopening, the run was invisible to event delivery by
// wait key and the completed record to the idempotency look-up. Migration
// 013's triggers list such rows and the store indexes them when it opens.
func TestFidelityPythonNaNWritesAfterMigration(t *testing.T) {
	t.Parallel()
	path := migratedDB(t)
	pythonWrite(t, path, false)
	s := open(t, path) // our store opens the database again
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent,
		WaitKeys: []string{"evt:session:s1:approved"}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.LedgerFindCompleted(t.Context(), pyNaNRunID, pyNaNRecKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || rec == nil {
		t.Fatalf("after Python wrote NaN-holding rows to a migrated database: RunList by wait key = %d runs (want 1), LedgerFindCompleted found = %v (want true)",
			len(got), rec != nil)
	}
}
