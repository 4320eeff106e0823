package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// A ledger row whose record_json does not decode to a record (torn JSON, a
// JSON value that is not an object, a member of the wrong type) is skipped
// and logged, not fatal to the whole read: Python's ledger stores skip
// such lines and rows in list (AbstractRuntime storage/sqlite.py
// SqliteLedgerStore.list, storage/json_files.py), and our SQLite store
// does the same (store/sqlite/ledger.go readLedgerRows, scanCompleted;
// docs/compatibility.md). One such row, written by hand, by a migration
// tool or by a bug, used to make every LedgerList and LedgerFindCompleted
// of its run fail, so the run could neither be read nor resumed.

// undecodableRows are record_json texts that do not decode to a record.
var undecodableRows = []string{
	`{"run_id": `,                       // torn JSON
	`[1, 2]`,                            // JSON, not an object
	`{"run_id": "r", "status": 5}`,      // a member of the wrong type
	`{"run_id": "r", "step_id": ["s"]}`, // likewise
}

// openLogged opens a Store on a fresh schema whose log lines go to logs.
func openLogged(t *testing.T, logs *storetest.LogBuffer) (*postgres.Store, string) {
	t.Helper()
	schema := testSchema(t)
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), MaxConns: 4})
	if err != nil {
		t.Fatalf("New(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, schema
}

// corruptLedgerRow overwrites the record_json of runID's row at seq, as a
// hand edit or a migration tool would.
func corruptLedgerRow(t *testing.T, schema, runID string, seq int64, text string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(t.Context(), `UPDATE `+pgx.Identifier{schema, "ledger"}.Sanitize()+
		` SET record_json = $3 WHERE run_id = $1 AND seq = $2`, runID, seq, text)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("corrupting ledger row %d of %s: %v (%d rows)", seq, runID, err, tag.RowsAffected())
	}
}

// appendCompleted appends n completed records of runID, the i-th (from 1)
// keyed keys(i).
func appendCompleted(t *testing.T, s *postgres.Store, runID string, n int, key func(i int) string) {
	t.Helper()
	var recs []*durable.StepRecord
	for i := 1; i <= n; i++ {
		recs = append(recs, &durable.StepRecord{RunID: runID, StepID: fmt.Sprintf("s%d", i), NodeID: "n",
			Status: durable.StepCompleted, Attempt: 1, IdempotencyKey: key(i)})
	}
	if err := s.LedgerAppend(t.Context(), runID, recs); err != nil {
		t.Fatal(err)
	}
}

func recordSeqs(recs []*durable.StepRecord) []int64 {
	seqs := []int64{}
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	return seqs
}

// TestLedgerListSkipsUndecodableRows: the rows that do not decode are
// skipped and each is logged with its run and seq; the others are listed,
// and the next append takes the seq after the highest row.
func TestLedgerListSkipsUndecodableRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var logs storetest.LogBuffer
	s, schema := openLogged(t, &logs)
	const run = "run-undecodable"
	appendCompleted(t, s, run, 6, func(int) string { return "" })
	for i, text := range undecodableRows {
		corruptLedgerRow(t, schema, run, int64(i+2), text) // seqs 2..5
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: run})
	if err != nil {
		t.Fatalf("LedgerList with undecodable rows: %v; want them skipped and the others listed", err)
	}
	if got := recordSeqs(recs); !slices.Equal(got, []int64{1, 6}) {
		t.Fatalf("LedgerList seqs = %v; want [1 6]", got)
	}
	for seq := 2; seq <= 5; seq++ {
		want := fmt.Sprintf("seq=%d", seq)
		if !strings.Contains(logs.String(), "skipping undecodable ledger record") || !strings.Contains(logs.String(), want) {
			t.Errorf("no warning about the skipped row (%s) in the log:\n%s", want, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "run_id="+run) {
		t.Errorf("the warnings do not name the run:\n%s", logs.String())
	}
	rec := &durable.StepRecord{RunID: run, StepID: "s7", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := s.LedgerAppend(ctx, run, []*durable.StepRecord{rec}); err != nil || rec.Seq != 7 {
		t.Fatalf("LedgerAppend after the listing = seq %d, %v; want seq 7", rec.Seq, err)
	}
}

// TestLedgerListLimitCountsReadableRecords: a limit counts the records
// returned, so a page whose rows were skipped reads on past them; a caller
// paging by the last seq it got sees every readable record once and
// reaches the end.
func TestLedgerListLimitCountsReadableRecords(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var logs storetest.LogBuffer
	s, schema := openLogged(t, &logs)
	const run = "run-undecodable-pages"
	appendCompleted(t, s, run, 8, func(int) string { return "" })
	for _, seq := range []int64{2, 3, 4, 7, 8} { // 8: the last row unreadable
		corruptLedgerRow(t, schema, run, seq, undecodableRows[int(seq)%len(undecodableRows)])
	}
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 2, []int64{1, 5}},
		{1, 1, []int64{5}},
		{1, 2, []int64{5, 6}},
		{1, 3, []int64{5, 6}},
		{6, 1, []int64{}},
		{6, 0, []int64{}},
		{0, 0, []int64{1, 5, 6}},
	} {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: run, After: tc.after, Limit: tc.limit})
		if err != nil {
			t.Fatalf("LedgerList(after %d, limit %d): %v", tc.after, tc.limit, err)
		}
		if got := recordSeqs(recs); !slices.Equal(got, tc.want) {
			t.Errorf("LedgerList(after %d, limit %d) seqs = %v; want %v", tc.after, tc.limit, got, tc.want)
		}
	}
	var paged []int64
	for after, pages := int64(0), 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("paging by the last seq did not end; got %v so far", paged)
		}
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: run, After: after, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		after = recs[len(recs)-1].Seq
		paged = append(paged, recordSeqs(recs)...)
	}
	if !slices.Equal(paged, []int64{1, 5, 6}) {
		t.Errorf("paging one record at a time gave seqs %v; want [1 5 6]", paged)
	}
	if n, err := s.LedgerCount(ctx, run); err != nil || n != 8 {
		t.Errorf("LedgerCount = %d, %v; want 8 (the last seq, the skipped row's)", n, err)
	}
}

// TestLedgerFindCompletedSkipsUndecodableRows: an undecodable row is never
// a match and does not fail the look-up; a later readable completed record
// of the same key is found.
func TestLedgerFindCompletedSkipsUndecodableRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var logs storetest.LogBuffer
	s, schema := openLogged(t, &logs)
	const run = "run-undecodable-find"
	// Seqs 1 and 3 complete key "k"; seq 2 completes "only".
	appendCompleted(t, s, run, 3, func(i int) string { return map[int]string{1: "k", 2: "only", 3: "k"}[i] })
	corruptLedgerRow(t, schema, run, 1, undecodableRows[0])
	corruptLedgerRow(t, schema, run, 2, undecodableRows[2])

	rec, err := s.LedgerFindCompleted(ctx, run, "k")
	if err != nil || rec == nil || rec.Seq != 3 {
		t.Fatalf("LedgerFindCompleted(k) = %+v, %v; want the readable record at seq 3", rec, err)
	}
	rec, err = s.LedgerFindCompleted(ctx, run, "only")
	if err != nil || rec != nil {
		t.Fatalf("LedgerFindCompleted(only) = %+v, %v; want no match and no error (its one row does not decode)", rec, err)
	}
	for _, want := range []string{"seq=1", "seq=2"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no warning about the skipped row (%s) in the log:\n%s", want, logs.String())
		}
	}
}

// TestLedgerListPagesPastAGapInSeqs: a row deleted by hand leaves a gap in
// the seqs. A page that skipped an undecodable row reads on after the last
// seq it read, not after as many seqs as it read rows (which would read
// the record after the gap twice), and LedgerCount is still the last seq,
// not the number of rows, so the next append takes the seq after it.
func TestLedgerListPagesPastAGapInSeqs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var logs storetest.LogBuffer
	s, schema := openLogged(t, &logs)
	const run = "run-gap"
	appendCompleted(t, s, run, 5, func(int) string { return "" })
	conn := plainConn(t)
	if tag, err := conn.Exec(ctx, `DELETE FROM `+pgx.Identifier{schema, "ledger"}.Sanitize()+
		` WHERE run_id = $1 AND seq = 2`, run); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("deleting ledger row 2: %v (%d rows)", err, tag.RowsAffected())
	}
	corruptLedgerRow(t, schema, run, 1, undecodableRows[0])
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 2, []int64{3, 4}},
		{0, 3, []int64{3, 4, 5}},
		{0, 0, []int64{3, 4, 5}},
		{1, 1, []int64{3}},
	} {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: run, After: tc.after, Limit: tc.limit})
		if err != nil {
			t.Fatalf("LedgerList(after %d, limit %d): %v", tc.after, tc.limit, err)
		}
		if got := recordSeqs(recs); !slices.Equal(got, tc.want) {
			t.Errorf("LedgerList(after %d, limit %d) seqs = %v; want %v", tc.after, tc.limit, got, tc.want)
		}
	}
	if n, err := s.LedgerCount(ctx, run); err != nil || n != 5 {
		t.Errorf("LedgerCount = %d, %v; want 5 (the last seq, not the 4 rows left)", n, err)
	}
	rec := &durable.StepRecord{RunID: run, StepID: "s6", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := s.LedgerAppend(ctx, run, []*durable.StepRecord{rec}); err != nil || rec.Seq != 6 {
		t.Fatalf("LedgerAppend after the gap = seq %d, %v; want seq 6", rec.Seq, err)
	}
}
