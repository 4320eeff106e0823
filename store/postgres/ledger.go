package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// LedgerList implements store.LedgerStore.
func (s *Store) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	var limit *int64
	if p.Limit > 0 {
		l := int64(p.Limit)
		limit = &l // NULL: no limit
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, record_json FROM ledger WHERE run_id = $1 AND seq > $2
		ORDER BY seq ASC LIMIT $3`, keyText(p.RunID), p.After, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing ledger of %s: %w", p.RunID, err)
	}
	defer rows.Close()
	out := []*durable.StepRecord{}
	for rows.Next() {
		var seq int64
		var text []byte
		if err := rows.Scan(&seq, &text); err != nil {
			return nil, fmt.Errorf("postgres: listing ledger of %s: %w", p.RunID, err)
		}
		rec, err := store.RecordFromRow(seq, text)
		if err != nil {
			return nil, fmt.Errorf("postgres: listing ledger of %s: %w", p.RunID, err)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: listing ledger of %s: %w", p.RunID, err)
	}
	return out, nil
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

// LedgerDelete implements store.LedgerStore: a later append starts again
// at seq 1.
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
	b.Queue(`DELETE FROM ledger WHERE run_id = $1`, keyText(runID))
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: deleting ledger of %s: %w", runID, err)
	}
	return tag.RowsAffected(), nil
}

// LedgerFindCompleted implements store.LedgerFinder from the partial
// index on completed_key.
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, idempotencyKey string) (*durable.StepRecord, error) {
	if idempotencyKey == "" {
		return nil, nil // names no effect (store.FindCompleted)
	}
	var seq int64
	var text []byte
	err := s.pool.QueryRow(ctx, `SELECT seq, record_json FROM ledger
		WHERE run_id = $1 AND completed_key = $2 ORDER BY seq ASC LIMIT 1`, keyText(runID), keyText(idempotencyKey)).Scan(&seq, &text)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	var rec *durable.StepRecord
	if err == nil {
		rec, err = store.RecordFromRow(seq, text)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: finding completed record %q of %s: %w", idempotencyKey, runID, err)
	}
	return rec, nil
}
