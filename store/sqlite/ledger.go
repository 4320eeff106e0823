package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unsafe"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// encodedRecord is a record ready for the ledger table.
type encodedRecord struct {
	json         string // TEXT, as Python stores it ([]byte would bind as a BLOB)
	completedKey any    // the idempotency key ("" when none) of a completed record, else NULL
}

// encodeRecords encodes records as the Python store writes record_json:
// json.dumps separators, non-ASCII kept, no seq. The texts view buf's
// bytes (see text), which hold them all.
func encodeRecords(buf *[]byte, records []*durable.StepRecord) ([]encodedRecord, error) {
	if len(records) == 0 {
		return nil, nil
	}
	out := make([]encodedRecord, len(records))
	ends := make([]int, len(records))
	start := len(*buf)
	for i, rec := range records {
		var err error
		if *buf, err = durable.AppendRecord(*buf, rec, pyjson.Line); err != nil {
			return nil, fmt.Errorf("encoding record %d: %w", i, err)
		}
		ends[i] = len(*buf)
		if rec.Status == durable.StepCompleted {
			out[i].completedKey = rec.IdempotencyKey
		}
	}
	for i, end := range ends { // views taken once *buf has stopped growing
		out[i].json = text(*buf, start, end)
		start = end
	}
	return out, nil
}

// text returns b[start:end] as a string sharing b's memory. The texts
// handed to SQL view a pooled buffer (pyjson.GetBuffer) without a copy: the
// driver copies a bound text into SQLite's memory, so the buffer may go
// back to the pool as soon as the statements have run (after the commit).
func text(b []byte, start, end int) string {
	if start == end {
		return ""
	}
	return unsafe.String(&b[start], end-start)
}

// appendRecords allocates len(recs) seqs after the run's last one and
// inserts the records; it returns the first seq. It runs inside a write
// transaction.
func (s *Store) appendRecords(ctx context.Context, runID string, recs []encodedRecord) (int64, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	last, known := int64(0), false
	if s.cache != nil {
		last, known = s.cache.lastSeq(runID)
	}
	if !known {
		var err error
		if last, err = s.w.lastSeq.queryInt64(ctx, runID); err != nil {
			return 0, fmt.Errorf("allocating ledger seqs: %w", err)
		}
	}
	first := last + 1
	following := s.own.following()
	var rowids []int64
	for i, rec := range recs {
		if _, err := s.w.ledgerInsert.exec(ctx, runID, first+int64(i), rec.json, rec.completedKey); err != nil {
			return 0, fmt.Errorf("inserting ledger record: %w", err)
		}
		if following {
			id, err := s.w.lastRowid.queryInt64(ctx)
			if err != nil {
				return 0, fmt.Errorf("noting an own ledger record for ListenLedger: %w", err)
			}
			rowids = append(rowids, id)
		}
	}
	s.ledgerGrown = true
	if following {
		logTop, err := s.w.deleteLogTop.queryInt64(ctx)
		if err != nil {
			return 0, fmt.Errorf("noting own ledger records for ListenLedger: %w", err)
		}
		s.own.appended(runID, first, rowids, logTop)
	}
	if s.shared {
		if _, err := s.w.headRaise.exec(ctx, runID, first+int64(len(recs))-1); err != nil {
			return 0, fmt.Errorf("recording the ledger head: %w", err)
		}
	}
	return first, nil
}

// cacheCommitted tells the cache about the records of a run's commit
// (see cacheAppended). A commit that leaves the run waiting keeps only its
// last seq, which the next commit's fast path needs: the run is idle until
// its wait resolves, and may stay so for days; its records, which no write
// needs, would hold cache memory and collector work meanwhile. A read of
// its ledger caches the whole of it again (LedgerList).
func (s *Store) cacheCommitted(r *durable.RunState, records []*durable.StepRecord, first int64, recs []encodedRecord) {
	if r.Status != durable.RunWaiting {
		s.cacheAppended(r.RunID, records, first, recs)
		return
	}
	s.cache.parked(r.RunID, first+int64(len(records))-1, len(records) > 0)
}

// cacheAppended tells the cache about records just committed from seq
// first on (recs are their encodings). Copies are taken before setSeqs
// touches the caller's records; a record the cache cannot copy makes it
// forget the run's ledger.
func (s *Store) cacheAppended(runID string, records []*durable.StepRecord, first int64, recs []encodedRecord) {
	if len(records) == 0 {
		return
	}
	if !s.cache.wantsRecords(runID, first) { // the copies would be dropped
		s.cache.advanced(runID, first+int64(len(records))-1)
		return
	}
	copies := make([]*frozen.Record, len(records))
	var size int64
	for i, rec := range records {
		c, err := frozen.NewStoredRecord(rec, first+int64(i))
		if err != nil {
			s.cache.ledgerUnknown(runID)
			return
		}
		copies[i] = c
		size += int64(len(recs[i].json))
	}
	s.cache.appended(runID, copies, size)
}

func setSeqs(records []*durable.StepRecord, first int64) {
	for i, rec := range records {
		rec.Seq = first + int64(i)
	}
}

// LedgerAppend implements store.LedgerStore in one transaction.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if runID == "" {
		return errors.New("sqlite: ledger append: run id is required")
	}
	buf := pyjson.GetBuffer()
	defer pyjson.PutBuffer(buf)
	recs, err := encodeRecords(buf, records)
	if err != nil {
		return fmt.Errorf("sqlite: appending to ledger of %s: %w", runID, err)
	}
	if len(recs) == 0 {
		return nil
	}
	if s.redo != nil {
		if handled, err := s.appendFromCache(runID, records, recs); handled {
			if err != nil {
				return fmt.Errorf("sqlite: appending to ledger of %s: %w", runID, err)
			}
			return nil
		}
	}
	var first int64
	err = s.writeThen(ctx, func(ctx context.Context) error {
		first, err = s.appendRecords(ctx, runID, recs)
		return err
	}, func() { s.cacheAppended(runID, records, first, recs) })
	if err != nil {
		return fmt.Errorf("sqlite: appending to ledger of %s: %w", runID, err)
	}
	setSeqs(records, first)
	return nil
}

// LedgerList implements store.LedgerStore.
func (s *Store) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	var cached []*durable.StepRecord
	if s.fromCache(func() bool {
		all, ok := s.cache.ledger(p.RunID)
		if ok {
			cached = copyRecords(all, p.After, p.Limit)
		}
		return ok
	}) {
		return cached, nil
	}
	rd, err := s.readRun(ctx, p.RunID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing ledger of %s: %w", p.RunID, err)
	}
	defer rd.release()
	var hit bool
	if rd.cached(func(c *hotCache) {
		var all []*frozen.Record
		if all, hit = c.ledger(p.RunID); hit {
			cached = copyRecords(all, p.After, p.Limit)
		}
	}); hit {
		return cached, nil
	}
	out, last, whole, size, err := s.readLedgerRows(ctx, rd, p)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing ledger of %s: %w", p.RunID, err)
	}
	if rd.cache != nil && p.After == 0 && whole {
		// The whole ledger: decoded records are stored copies already.
		all := make([]*frozen.Record, len(out))
		for i, rec := range out {
			all[i] = frozen.NewRecord(rec)
		}
		rd.keep(p.RunID, func(c *hotCache) { c.putLedger(p.RunID, all, size, last) })
	}
	return out, nil
}

// readLedgerRows reads the records of p.RunID after p.After from the
// database, at most p.Limit of them (0: all). A row that does not decode
// to a record (torn JSON, a JSON value that is not an object) is skipped
// and logged, as Python's SqliteLedgerStore.list and our JSON-file store
// skip it, rather than making the run's whole ledger unreadable; the limit
// counts the records returned, so the rows are read in pages, keyed by
// seq, until it is reached. It returns the highest seq read (skipped rows
// included: their seqs stay taken), whether the rows ran out (so that out
// is every record after p.After), and the JSON size of out.
func (s *Store) readLedgerRows(ctx context.Context, rd *reading, p *store.LedgerListParams) (
	out []*durable.StepRecord, last int64, whole bool, size int64, err error) {
	out = []*durable.StepRecord{}
	after := p.After
	for {
		want := int64(-1) // SQLite: no limit
		if p.Limit > 0 {
			want = int64(p.Limit - len(out))
		}
		var n int64
		n, after, err = s.scanLedgerPage(ctx, rd, p.RunID, after, want, func(rec *durable.StepRecord, text []byte) {
			out = append(out, rec)
			size += int64(len(text))
		})
		if err != nil {
			return nil, 0, false, 0, err
		}
		last = max(last, after)
		if want < 0 || n < want {
			return out, last, true, size, nil // the rows ran out
		}
		if len(out) == p.Limit {
			return out, last, false, size, nil
		}
		// Rows were skipped, and rows may remain: read on past them.
	}
}

// scanLedgerPage reads at most limit (< 0: all) rows of runID's ledger
// after seq after and passes the records that decode to keep. It returns
// the number of rows read and the last one's seq (after when none).
func (s *Store) scanLedgerPage(ctx context.Context, rd *reading, runID string, after, limit int64,
	keep func(rec *durable.StepRecord, text []byte)) (n, last int64, err error) {
	last = after
	rows, err := rd.ledgerList.QueryContext(ctx, runID, after, limit)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var text sql.RawBytes // valid until Next: decoded at once, never copied
		if err := rows.Scan(&seq, &text); err != nil {
			return 0, 0, err
		}
		n, last = n+1, seq
		rec := store.ReadableRecord(ctx, s.log, runID, seq, text)
		if rec == nil {
			continue
		}
		keep(rec, text)
	}
	return n, last, rows.Err()
}

// copyRecords returns copies of the records of all after seq after, at
// most limit of them (limit <= 0: all).
func copyRecords(all []*frozen.Record, after int64, limit int) []*durable.StepRecord {
	out := []*durable.StepRecord{}
	for _, rec := range all {
		if rec.Head().Seq <= after {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, rec.Thaw())
	}
	return out
}

// LedgerCount implements store.LedgerStore: the run's last seq (what
// Python's ledger_heads.last_seq holds).
func (s *Store) LedgerCount(ctx context.Context, runID string) (int64, error) {
	var last int64
	if s.fromCache(func() (ok bool) { last, ok = s.cache.lastSeq(runID); return ok }) {
		return last, nil
	}
	rd, err := s.readRun(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: counting ledger of %s: %w", runID, err)
	}
	defer rd.release()
	var known bool
	if rd.cached(func(c *hotCache) { last, known = c.lastSeq(runID) }); known {
		return last, nil
	}
	var n int64
	if err := rd.ledgerCount.QueryRowContext(ctx, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: counting ledger of %s: %w", runID, err)
	}
	return n, nil
}

// LedgerDelete implements store.LedgerStore: the records and the head go,
// so a later append starts again at seq 1.
func (s *Store) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	var n int64
	err := s.writeThen(ctx, func(ctx context.Context) error {
		var err error
		var logBefore int64
		following := s.own.following()
		if following {
			if logBefore, err = s.w.deleteLogTop.queryInt64(ctx); err != nil {
				return err
			}
		}
		if n, err = s.w.ledgerDelete.exec(ctx, runID); err != nil {
			return err
		}
		if following && n > 0 {
			// The trigger logged the delete (migration 021): note its
			// log entry, with the ledger's end the delete left.
			logAfter, err := s.w.deleteLogTop.queryInt64(ctx)
			if err != nil {
				return err
			}
			end, err := s.w.ledgerTop.queryInt64(ctx)
			if err != nil {
				return err
			}
			if logAfter > logBefore {
				s.own.deleted(logAfter, runID, end)
			}
		}
		_, err = s.w.headDelete.exec(ctx, runID)
		return err
	}, func() { s.cache.ledgerDeleted(runID) })
	s.keys.forget(runID) // whether or not the delete committed: a look-up reads again
	if err != nil {
		return 0, fmt.Errorf("sqlite: deleting ledger of %s: %w", runID, err)
	}
	return n, nil
}

// LedgerFindCompleted implements store.LedgerFinder from the run's cached
// ledger, or else from the keyIndex, which reads only the rows appended
// since the run's last look-up.
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, idempotencyKey string) (*durable.StepRecord, error) {
	if idempotencyKey == "" {
		return nil, nil // names no effect (store.FindCompleted)
	}
	if err := s.indexPythonWrites(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: finding completed record %q of %s: %w", idempotencyKey, runID, err)
	}
	rd, err := s.readRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: finding completed record %q of %s: %w", idempotencyKey, runID, err)
	}
	defer rd.release()
	var found *durable.StepRecord
	var known bool
	if rd.cached(func(c *hotCache) {
		var all []*frozen.Record
		if all, known = c.ledger(runID); known {
			for _, rec := range all {
				if h := rec.Head(); h.Status == durable.StepCompleted && h.IdempotencyKey == idempotencyKey {
					found = rec.Thaw()
					return
				}
			}
		}
	}); known {
		return found, nil
	}
	found, answered, err := s.findIndexed(ctx, rd, runID, idempotencyKey)
	if err == nil && !answered {
		found, err = s.scanCompleted(ctx, rd, runID, idempotencyKey)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: finding completed record %q of %s: %w", idempotencyKey, runID, err)
	}
	return found, nil
}

// scanCompleted returns the first record of runID, in seq order, that the
// completed_key index lists under idempotencyKey and that decodes to a
// completed record of that key, or nil. A row that does not decode is
// skipped and logged, as readLedgerRows skips it: LedgerList caches the
// ledger without such rows, and the answer from that cache must be the
// same as this one, whether or not the ledger was listed first.
func (s *Store) scanCompleted(ctx context.Context, rd *reading, runID, idempotencyKey string) (*durable.StepRecord, error) {
	s.findScans.Add(1)
	rows, err := rd.findCompleted.QueryContext(ctx, runID, idempotencyKey)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var text sql.RawBytes // valid until Next: decoded at once, never copied
		if err := rows.Scan(&seq, &text); err != nil {
			return nil, err
		}
		rec := store.ReadableRecord(ctx, s.log, runID, seq, text)
		if rec == nil {
			continue
		}
		// The cached path matches on the decoded record; so does this one,
		// should the index and the document ever disagree.
		if rec.Status == durable.StepCompleted && rec.IdempotencyKey == idempotencyKey {
			return rec, nil
		}
	}
	return nil, rows.Err()
}
