package sqlite_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
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
// idempotency key key, as Python writes it.
func pyCompletedRecord(seq, key string) string {
	return pyRecordRow(seq, `"`+key+`"`, "1")
}

// undecodableCompleted is pyCompletedRecord with a started_at that is not
// a string, which the record decoder refuses. (An attempt that is not a
// number no longer serves: it is read and kept as written, as Python's
// stores keep it.)
func undecodableCompleted(seq, key string) string {
	return strings.Replace(pyCompletedRecord(seq, key), `"started_at": "2026-11-29T22:47:00+00:00"`, `"started_at": 5`, 1)
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
				3: undecodableCompleted("3", "k"), // JSON object, indexed, but the decoder refuses it
				4: pyCompletedRecord("4", "k"),
				5: undecodableCompleted("5", "only-bad"),
			})
			var logs storetest.LogBuffer
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
