package sqlite_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// LedgerList skips (and logs) a ledger row that does not decode and
// caches the run's ledger without it (readLedgerRows: "rather than making
// the run's whole ledger unreadable", as Python's SqliteLedgerStore.list
// skips it). LedgerFindCompleted answers from that cache when it is warm
// and from the completed_key index when it is cold; store.LedgerStore's
// methods answer from the stored ledger (the cache is only an
// optimisation, cache.go), so both paths must give the same answer. A
// row that is a JSON object, and so indexed, but that the decoder refuses
// made the cold path fail where the warm one skipped it.

// pyCompletedRecord is a completed record row of pyUserRun at seq with
// idempotency key key, as Python writes it; attempt is its JSON text.
func pyCompletedRecord(seq, key, attempt string) string {
	return pyRecordRow(seq, `"`+key+`"`, attempt)
}

// TestLedgerFindCompletedSkipsUndecodableRows: an indexed row that does
// not decode is skipped and logged, the next matching row in seq order is
// returned (nil when none decodes), and the answer is the same before and
// after LedgerList has filled the cache, in every store mode.
func TestLedgerFindCompletedSkipsUndecodableRows(t *testing.T) {
	t.Parallel()
	for name, cfg := range ledgerModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := pythonDBWithLedgerRows(t, map[int64]string{
				3: pyCompletedRecord("3", "k", `"x"`), // JSON object, indexed, but attempt is not a number
				4: pyCompletedRecord("4", "k", "1"),
				5: pyCompletedRecord("5", "only-bad", `"x"`),
			})
			var logs logBuffer
			cfg.Path, cfg.Logger = path, slog.New(slog.NewTextHandler(&logs, nil))
			s, err := sqlite.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })

			find := func(when string) {
				t.Helper()
				rec, err := s.LedgerFindCompleted(ctx, pyUserRun, "k")
				if err != nil || rec == nil || rec.Seq != 4 {
					t.Errorf("%s: LedgerFindCompleted(k) = %v, %v; want the record at seq 4 (seq 3 does not decode)", when, rec, err)
				}
				rec, err = s.LedgerFindCompleted(ctx, pyUserRun, "only-bad")
				if err != nil || rec != nil {
					t.Errorf("%s: LedgerFindCompleted(only-bad) = %v, %v; want nil, nil (its one row does not decode)", when, rec, err)
				}
			}
			find("cache cold")
			if !strings.Contains(logs.String(), "skipping undecodable ledger record") || !strings.Contains(logs.String(), "seq=3") {
				t.Errorf("no warning about the skipped row (seq 3) in the log:\n%s", logs.String())
			}
			if _, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: pyUserRun}); err != nil {
				t.Fatalf("LedgerList: %v", err)
			}
			find("after LedgerList (cache warm)")
		})
	}
}
