package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// encodedRecords are records ready for the ledger table, as two parallel
// arrays for one INSERT … SELECT FROM unnest.
type encodedRecords struct {
	json []string // record_json: Python's json.dumps layout, no seq
	// completedKey is the idempotency key ("" when none) of a completed
	// record, else NULL.
	completedKey []*string
}

func encodeRecords(records []*durable.StepRecord) (encodedRecords, error) {
	var out encodedRecords
	if len(records) == 0 {
		return out, nil
	}
	out.json = make([]string, len(records))
	out.completedKey = make([]*string, len(records))
	for i, rec := range records {
		b, err := durable.MarshalRecord(rec, pyjson.Line)
		if err != nil {
			return out, fmt.Errorf("encoding record %d: %w", i, err)
		}
		out.json[i] = string(b)
		if rec.Status == durable.StepCompleted {
			key := keyText(rec.IdempotencyKey)
			out.completedKey[i] = &key
		}
	}
	return out, nil
}

// ledgerInsertSQL inserts the records after the run's last seq. It must
// run after the run's ledger lock is taken: in READ COMMITTED the
// statement's snapshot then sees every append committed before.
const ledgerInsertSQL = `INSERT INTO ledger (run_id, seq, record_json, completed_key)
	SELECT $1, h.last + t.ord, t.rec, t.ckey
	FROM (SELECT COALESCE(MAX(seq), 0) AS last FROM ledger WHERE run_id = $1) h,
		unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(rec, ckey, ord)
	RETURNING seq`

// queueAppend queues, on b, the statements that allocate len(recs) seqs
// after the run's last one and insert the records: the run's ledger
// advisory lock (held to the end of the transaction; it serialises
// appenders in every process, so seqs are gapless and never reused), then
// the INSERT, then with Config.NotifyAppends the notification of the
// append (listen.go), which the server sends when the transaction
// commits. readAppend reads their results.
func (s *Store) queueAppend(b *pgx.Batch, runID string, recs encodedRecords) {
	l := s.lockOn("ledger", keyText(runID))
	b.Queue(advisoryLockSQL, l.space, l.name)
	b.Queue(ledgerInsertSQL, keyText(runID), recs.json, recs.completedKey)
	if s.notify {
		b.Queue(notifySQL, ledgerChannel, s.appendPayload(runID))
	}
}

// readAppend reads the results of queueAppend and returns the first seq.
func (s *Store) readAppend(br pgx.BatchResults) (int64, error) {
	if _, err := br.Exec(); err != nil {
		return 0, fmt.Errorf("allocating ledger seqs: %w", err)
	}
	first, err := readInserted(br)
	if err != nil {
		return 0, err
	}
	if s.notify {
		if _, err := br.Exec(); err != nil {
			return 0, fmt.Errorf("notifying the append: %w", err)
		}
	}
	return first, nil
}

// readInserted reads the seqs the ledger INSERT returned and returns the
// first.
func readInserted(br pgx.BatchResults) (int64, error) {
	rows, err := br.Query()
	if err != nil {
		return 0, fmt.Errorf("inserting ledger records: %w", err)
	}
	first := int64(-1)
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return 0, fmt.Errorf("inserting ledger records: %w", err)
		}
		if first < 0 || seq < first {
			first = seq
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("inserting ledger records: %w", err)
	}
	return first, nil
}

func setSeqs(records []*durable.StepRecord, first int64) {
	for i, rec := range records {
		rec.Seq = first + int64(i)
	}
}

// LedgerAppend implements store.LedgerStore in one round trip: a batch
// the server runs as one implicit transaction, under the same per-run lock
// as RunCommit.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if runID == "" {
		return errors.New("postgres: ledger append: run id is required")
	}
	recs, err := encodeRecords(records)
	if err != nil {
		return fmt.Errorf("postgres: appending to ledger of %s: %w", runID, err)
	}
	if len(recs.json) == 0 {
		return nil
	}
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: appending to ledger of %s: %w", runID, err)
	}
	defer done()
	var b pgx.Batch
	s.queueAppend(&b, runID, recs)
	br := conn.SendBatch(ctx, &b)
	first, err := s.readAppend(br)
	if err = errors.Join(err, br.Close()); err != nil {
		return fmt.Errorf("postgres: appending to ledger of %s: %w", runID, err)
	}
	setSeqs(records, first)
	return nil
}

// LedgerList implements store.LedgerStore. A row that does not decode to
// a record (torn JSON, a JSON value that is not an object, a member of the
// wrong type) is skipped and logged, as the SQLite store and Python's
// ledger stores skip it, rather than making the run's whole ledger
// unreadable. The limit counts the records returned, so the rows are read
// in pages, keyed by seq, until it is reached or the rows run out.
func (s *Store) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	out := []*durable.StepRecord{}
	after := p.After
	for {
		var want *int64 // NULL: no limit
		if p.Limit > 0 {
			w := int64(p.Limit - len(out))
			want = &w
		}
		n, last, err := s.scanLedgerPage(ctx, p.RunID, after, want, func(rec *durable.StepRecord) {
			out = append(out, rec)
		})
		if err != nil {
			return nil, fmt.Errorf("postgres: listing ledger of %s: %w", p.RunID, err)
		}
		if want == nil || n < *want || len(out) == p.Limit {
			return out, nil // the rows ran out, or the limit is reached
		}
		// Rows were skipped and rows may remain: read on past them.
		after = last
	}
}

// scanLedgerPage reads at most limit (nil: all) rows of runID's ledger
// after seq after and passes the records that decode to keep. It returns
// the number of rows read, skipped ones included, and the last one's seq
// (after when none).
func (s *Store) scanLedgerPage(ctx context.Context, runID string, after int64, limit *int64,
	keep func(rec *durable.StepRecord)) (n, last int64, err error) {
	last = after
	rows, err := s.pool.Query(ctx, `SELECT seq, record_json FROM ledger WHERE run_id = $1 AND seq > $2
		ORDER BY seq ASC LIMIT $3`, keyText(runID), after, limit)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var text []byte
		if err := rows.Scan(&seq, &text); err != nil {
			return 0, 0, err
		}
		n, last = n+1, seq
		rec := store.ReadableRecord(ctx, s.log, runID, seq, text)
		if rec == nil {
			continue
		}
		keep(rec)
	}
	return n, last, rows.Err()
}

// LedgerCount implements store.LedgerStore: the run's last seq, as in the
// SQLite store.
func (s *Store) LedgerCount(ctx context.Context, runID string) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM ledger WHERE run_id = $1`, keyText(runID)).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: counting ledger of %s: %w", runID, err)
	}
	return n, nil
}

// notifyDeleteSQL notifies a ledger delete (listen.go) if the ledger has
// rows, as store/observe reports a delete only then. It runs under the
// run's ledger lock and before the DELETE, so it sees the rows the DELETE
// removes.
const notifyDeleteSQL = `SELECT pg_notify($1, $2) WHERE EXISTS (SELECT 1 FROM ledger WHERE run_id = $3)`

// LedgerDelete implements store.LedgerStore: a later append starts again
// at seq 1. With Config.NotifyAppends the delete is notified, so that
// followers in other processes read the ledger that grows again from its
// start.
func (s *Store) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: deleting ledger of %s: %w", runID, err)
	}
	defer done()
	// Under the run's ledger lock, as appends take it: a delete between an
	// append's insert and its commit would miss that record and leave it
	// alone at its old seq.
	l := s.lockOn("ledger", keyText(runID))
	b := &pgx.Batch{}
	b.Queue(advisoryLockSQL, l.space, l.name)
	if s.notify {
		b.Queue(notifyDeleteSQL, ledgerChannel, s.deletePayload(runID), keyText(runID))
	}
	b.Queue(`DELETE FROM ledger WHERE run_id = $1`, keyText(runID))
	br := conn.SendBatch(ctx, b)
	n, err := readDelete(br, s.notify)
	if err = errors.Join(err, br.Close()); err != nil {
		return 0, fmt.Errorf("postgres: deleting ledger of %s: %w", runID, err)
	}
	return n, nil
}

// readDelete reads the results of LedgerDelete's batch and returns the
// number of records deleted.
func readDelete(br pgx.BatchResults, notified bool) (int64, error) {
	if _, err := br.Exec(); err != nil {
		return 0, fmt.Errorf("locking the ledger: %w", err)
	}
	if notified {
		if _, err := br.Exec(); err != nil {
			return 0, fmt.Errorf("notifying the delete: %w", err)
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// LedgerFindCompleted implements store.LedgerFinder from the partial
// index on completed_key: the first row, in seq order, that the index
// lists under idempotencyKey and that decodes to a completed record of
// that key. A row that does not decode is skipped and logged, as
// LedgerList skips it, so it is never a match and does not fail the
// look-up.
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, idempotencyKey string) (*durable.StepRecord, error) {
	if idempotencyKey == "" {
		return nil, nil // names no effect (store.FindCompleted)
	}
	rec, err := s.scanCompleted(ctx, runID, idempotencyKey)
	if err != nil {
		return nil, fmt.Errorf("postgres: finding completed record %q of %s: %w", idempotencyKey, runID, err)
	}
	return rec, nil
}

// scanCompleted does the look-up of LedgerFindCompleted. The rows are
// read one by one as the index yields them: an undecodable row is rare,
// and the first readable row ends the scan.
func (s *Store) scanCompleted(ctx context.Context, runID, idempotencyKey string) (*durable.StepRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, record_json FROM ledger
		WHERE run_id = $1 AND completed_key = $2 ORDER BY seq ASC`, keyText(runID), keyText(idempotencyKey))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var text []byte
		if err := rows.Scan(&seq, &text); err != nil {
			return nil, err
		}
		rec := store.ReadableRecord(ctx, s.log, runID, seq, text)
		if rec == nil {
			continue
		}
		// Match on the decoded record too, as the memory and SQLite stores
		// do, should the completed_key column and the document disagree (a
		// hand edit, a copy tool): such a row is no completion of the key,
		// and answering it would replay a failed step or another key's
		// result as this effect's. The keys are compared as the column
		// holds them (keyText), so that a key spelled with bytes that are
		// not UTF-8 still finds its record, as before.
		if rec.Status == durable.StepCompleted && keyText(rec.IdempotencyKey) == keyText(idempotencyKey) {
			return rec, nil
		}
	}
	return nil, rows.Err()
}
