package sqlite_test

import (
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// Python's SqliteLedgerStore.list (AbstractRuntime storage/sqlite.py,
// 0.4.28 and later) skips a ledger row that json.loads refuses or that is
// not an object, and our JSON-file store skips such records too
// (store/jsonfile/ledger.go); doc.go promises that "a database written by
// Python opens and works". One such row made every LedgerList of its run
// fail, so the whole run's ledger (history, replay, hash-chain head) could
// not be read.

// ledgerModes are the store modes whose ledger paths differ: the cache
// with the redo log (appends from the cache), the cache without it, and
// the shared store (no cache: seqs from MAX(seq)).
var ledgerModes = map[string]sqlite.Config{
	"owned":         {},
	"owned no redo": {NoRedoLog: true},
	"shared":        {Shared: true},
}

// pyLedgerRecord is a record row as Python writes it, at seq.
func pyLedgerRecord(seq string) string { return pyRecordRow(seq, "null", "1") }

// pyRecordRow is a completed record row of pyUserRun at seq as Python
// writes it; key and attempt are the JSON texts of its idempotency key and
// attempt.
func pyRecordRow(seq, key, attempt string) string {
	return `{"run_id": "` + pyUserRun + `", "step_id": "s` + seq + `", "node_id": "n", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-11-29T22:47:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": ` + attempt + `, "idempotency_key": ` + key + `, "prev_hash": null, "record_hash": null, "signature": null}`
}

// pythonDBWithLedgerRows writes a Python database (pyUserRun's ledger
// holds seqs 1 and 2) and adds rows to pyUserRun's ledger as another
// process would; it returns the database's path.
func pythonDBWithLedgerRows(t *testing.T, rows map[int64]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	writePythonDB(t, path)
	db := rawDB(t, path)
	defer db.Close()
	for seq, text := range rows {
		if _, err := db.Exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, ?, ?)`, pyUserRun, seq, text); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func seqsOf(recs []*durable.StepRecord) []int64 {
	var seqs []int64
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	return seqs
}

// TestLedgerListSkipsUnreadableRecordRows: a torn row and a row that is
// JSON but not an object are skipped (and logged), the others listed, and
// the next append takes the seq after the highest row.
func TestLedgerListSkipsUnreadableRecordRows(t *testing.T) {
	t.Parallel()
	for name, cfg := range ledgerModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := pythonDBWithLedgerRows(t, map[int64]string{
				3: `{"run_id": "` + pyUserRun + `", "step_id": "to`,
				4: `null`,
				5: pyLedgerRecord("5"),
			})
			var logs storetest.LogBuffer
			cfg.Path, cfg.Logger = path, slog.New(slog.NewTextHandler(&logs, nil))
			s, err := sqlite.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: pyUserRun})
			if err != nil {
				t.Fatalf("LedgerList with one torn and one non-object row: %v; Python's list skips both and returns the others", err)
			}
			if got := seqsOf(recs); !slices.Equal(got, []int64{1, 2, 5}) {
				t.Fatalf("LedgerList seqs = %v; want [1 2 5]", got)
			}
			for _, seq := range []string{"seq=3", "seq=4"} {
				if !strings.Contains(logs.String(), "skipping undecodable ledger record") || !strings.Contains(logs.String(), seq) {
					t.Errorf("no warning about the skipped row (%s) in the log:\n%s", seq, logs.String())
				}
			}
			rec := &durable.StepRecord{RunID: pyUserRun, StepID: "s6", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
			if err := s.LedgerAppend(ctx, pyUserRun, []*durable.StepRecord{rec}); err != nil || rec.Seq != 6 {
				t.Fatalf("LedgerAppend after the listing = seq %d, %v; want seq 6", rec.Seq, err)
			}
		})
	}
}

// TestLedgerSeqsStayAboveSkippedLastRow: when the run's highest row is
// the unreadable one, the cache's last seq (which the owning store's
// appends and LedgerCount answer from) is that row's seq, not the last
// record listed: an append reusing it would fail on the primary key, or,
// from the redo log, only when applied in the background.
func TestLedgerSeqsStayAboveSkippedLastRow(t *testing.T) {
	t.Parallel()
	for name, cfg := range ledgerModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := pythonDBWithLedgerRows(t, map[int64]string{3: `[1, 2]`})
			cfg.Path = path
			s := openWith(t, cfg)
			recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: pyUserRun})
			if err != nil || !slices.Equal(seqsOf(recs), []int64{1, 2}) {
				t.Fatalf("LedgerList = %v, %v; want seqs [1 2]", seqsOf(recs), err)
			}
			if n, err := s.LedgerCount(ctx, pyUserRun); err != nil || n != 3 {
				t.Errorf("LedgerCount = %d, %v; want 3 (the last seq, the skipped row's)", n, err)
			}
			rec := &durable.StepRecord{RunID: pyUserRun, StepID: "s4", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
			if err := s.LedgerAppend(ctx, pyUserRun, []*durable.StepRecord{rec}); err != nil || rec.Seq != 4 {
				t.Fatalf("LedgerAppend = seq %d, %v; want seq 4, above the skipped row", rec.Seq, err)
			}
			if err := s.Close(); err != nil { // applies what the redo log queued
				t.Fatalf("Close: %v", err)
			}
			s = openWith(t, cfg)
			recs, err = s.LedgerList(ctx, &store.LedgerListParams{RunID: pyUserRun})
			if err != nil || !slices.Equal(seqsOf(recs), []int64{1, 2, 4}) {
				t.Fatalf("LedgerList after reopening = %v, %v; want seqs [1 2 4]", seqsOf(recs), err)
			}
		})
	}
}

// TestLedgerListLimitCountsReadableRecords: the limit counts the records
// returned, as the JSON-file store counts them, so a page is not cut
// short by a skipped row (a caller paging by After would take a short
// page for the end), and a limited listing is not cached as the whole
// ledger when rows remain behind it.
func TestLedgerListLimitCountsReadableRecords(t *testing.T) {
	t.Parallel()
	for name, cfg := range ledgerModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := pythonDBWithLedgerRows(t, map[int64]string{
				3: `"text"`, 4: `{"torn`, 5: pyLedgerRecord("5"), 6: pyLedgerRecord("6"),
			})
			cfg.Path = path
			s := openWith(t, cfg)
			for _, c := range []struct {
				after int64
				limit int
				want  []int64
			}{
				{0, 3, []int64{1, 2, 5}},
				{2, 1, []int64{5}},
				{2, 2, []int64{5, 6}},
				{5, 5, []int64{6}},
				{0, 0, []int64{1, 2, 5, 6}},
			} {
				recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: pyUserRun, After: c.after, Limit: c.limit})
				if err != nil || !slices.Equal(seqsOf(recs), c.want) {
					t.Errorf("LedgerList(After %d, Limit %d) = %v, %v; want %v", c.after, c.limit, seqsOf(recs), err, c.want)
				}
			}
		})
	}
}
