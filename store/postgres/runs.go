package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// runColumns are the columns RunCommit writes, in argument order (see
// runArgs); run_id and version are handled by each statement.
const runColumns = `workflow_id, status, wait_reason, wait_until, wait_key, due_at, parent_run_id,
	actor_id, session_id, updated_at, lifecycle_json, run_json`

const (
	// The run statements fail with division_by_zero when they write no
	// row (the run exists; a stale version), so that the rest of the
	// commit's batch, sent as one implicit transaction, is not applied.
	runInsertSQL = `WITH ins AS (INSERT INTO runs (` + runColumns + `, created_at, run_id, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (run_id) DO NOTHING RETURNING 1)
		SELECT 1 / (SELECT count(*)::int FROM ins)`
	// created_at is not rewritten: the run's create set it.
	runUpdateSQL = `WITH upd AS (UPDATE runs SET workflow_id = $1, status = $2, wait_reason = $3, wait_until = $4,
		wait_key = $5, due_at = $6, parent_run_id = $7, actor_id = $8, session_id = $9,
		updated_at = $10, lifecycle_json = $11, run_json = $12, version = version + 1
		WHERE run_id = $13 AND version = $14 RETURNING 1)
		SELECT 1 / (SELECT count(*)::int FROM upd)`
)

// RunCommit implements store.RunStore in one transaction, sent in one
// round trip: the run row (an INSERT … ON CONFLICT DO NOTHING for a
// create, an UPDATE … WHERE version = $n otherwise, which locks the row
// until commit) and the ledger records, whose seqs are allocated under
// the run's ledger lock (see queueAppend), go to the server as one
// pipelined batch, which PostgreSQL runs as one implicit transaction: an
// error in any statement rolls back all of them. The due-wait deadline is
// the row's due_at column. On any error nothing is written and p is
// unchanged.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run == nil || p.Run.RunID == "" {
		return errors.New("postgres: commit: run id is required")
	}
	if p.Create {
		if err := store.CheckNewRunIDs(p.Run); err != nil {
			return fmt.Errorf("postgres: creating run: %w", err)
		}
	}
	if err := store.CheckRunReadable(p.Run); err != nil {
		return fmt.Errorf("postgres: committing run %s: %w", p.Run.RunID, err)
	}
	r := p.Run
	args, err := runArgs(r)
	if err != nil {
		return fmt.Errorf("postgres: committing run %s: %w", r.RunID, err)
	}
	recs, err := encodeRecords(p.Records)
	if err != nil {
		return fmt.Errorf("postgres: committing run %s: %w", r.RunID, err)
	}
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: committing run %s at version %d: %w", r.RunID, r.Version, err)
	}
	defer done()
	var b pgx.Batch
	if p.Create {
		b.Queue(runInsertSQL, append(args, timeArg(r.CreatedAt), keyText(r.RunID), r.Version+1)...)
	} else {
		b.Queue(runUpdateSQL, append(args, keyText(r.RunID), r.Version)...)
	}
	if len(recs.json) > 0 {
		s.queueAppend(&b, r.RunID, recs)
	}
	var firstSeq int64
	br := conn.SendBatch(ctx, &b)
	err = s.readCommit(br, len(recs.json) > 0, &firstSeq)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if isNoRowWritten(err) {
		// The batch was rolled back; say why.
		if p.Create {
			err = store.ErrAlreadyExists
		} else {
			err = staleVersion(ctx, conn, r.RunID, r.Version)
		}
	} else if isKeyTooLong(err) {
		err = fmt.Errorf("%w: %w", store.ErrInvalidID, err)
	}
	if err != nil {
		return fmt.Errorf("postgres: committing run %s at version %d: %w", r.RunID, r.Version, err)
	}
	r.Version++
	setSeqs(p.Records, firstSeq)
	return nil
}

// isNoRowWritten reports the division_by_zero of a run statement that
// wrote no row (see runInsertSQL).
func isNoRowWritten(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22012"
}

// isKeyTooLong reports program_limit_exceeded: an index entry past
// btree's size limit, which an id of a few kilobytes makes. The same id is
// refused every time (docs/compatibility.md, PostgreSQL).
func isKeyTooLong(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "54000"
}

// readCommit reads the results of RunCommit's batch.
func (s *Store) readCommit(br pgx.BatchResults, records bool, firstSeq *int64) error {
	if _, err := br.Exec(); err != nil {
		return err
	}
	if !records {
		return nil
	}
	var err error
	*firstSeq, err = s.readAppend(br)
	return err
}

// staleVersion tells why an UPDATE … WHERE version = $n changed no row,
// on the write's connection (another one from a pool all writers hold
// could wait for good).
func staleVersion(ctx context.Context, conn *pgxpool.Conn, runID string, want int64) error {
	var have int64
	switch err := conn.QueryRow(ctx, `SELECT version FROM runs WHERE run_id = $1`, keyText(runID)).Scan(&have); {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return err
	case have == want:
		// Changed and changed back between the two statements: report
		// the conflict all the same, nothing was written.
		return fmt.Errorf("run %s changed concurrently: %w", runID, store.ErrConflict)
	default:
		return fmt.Errorf("stored version is %d, not %d: %w", have, want, store.ErrConflict)
	}
}

// runArgs returns the values of runColumns for r. wait_until is the until
// of any wait that has one; due_at only that of a waiting run (what
// RunListDue answers from).
func runArgs(r *durable.RunState) ([]any, error) {
	runJSON, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		return nil, err
	}
	var waitReason, waitKey *string
	var waitUntil, dueAt *time.Time
	if w := r.Waiting; w != nil {
		waitReason = nullString(string(w.Reason))
		waitUntil = timeArg(w.Until)
		waitKey = nullKey(w.WaitKey)
	}
	if until, ok := store.Deadline(r); ok {
		dueAt = timeArg(until)
	}
	var lifecycle *string
	if lc := r.Vars[store.RunLifecycleKey]; lc != nil {
		// Whatever Go type holds it: an object is an object once encoded.
		b, err := pyjson.Marshal(lc, pyjson.Line)
		if err != nil {
			return nil, fmt.Errorf("encoding vars._run_lifecycle: %w", err)
		}
		if len(b) > 0 && b[0] == '{' {
			lifecycle = nullString(string(b))
		}
	}
	args := make([]any, 0, 15)
	return append(args, keyText(r.WorkflowID), string(r.Status), waitReason, waitUntil, waitKey, dueAt,
		nullKey(r.ParentRunID), nullKey(r.ActorID), nullKey(r.SessionID),
		timeArg(r.UpdatedAt), lifecycle, string(runJSON)), nil
}

// timeArg maps the zero Time to SQL NULL.
func timeArg(t durable.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t.Time
}

// timeOf maps a scanned nullable timestamptz to a durable.Time.
func timeOf(t *time.Time) durable.Time {
	if t == nil {
		return durable.Time{}
	}
	return durable.NewTime(*t)
}

// RunGet implements store.RunStore. A row whose run_json cannot be
// decoded counts as absent, as in the SQLite store.
func (s *Store) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	var text []byte
	var version int64
	err := s.pool.QueryRow(ctx, `SELECT run_json, version FROM runs WHERE run_id = $1`, keyText(runID)).Scan(&text, &version)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: run %s: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: loading run %s: %w", runID, err)
	}
	r, err := durable.UnmarshalRun(text)
	if err != nil {
		s.log.WarnContext(ctx, "unreadable run_json", "run_id", runID, "error", err)
		return nil, fmt.Errorf("postgres: run %s: unreadable run_json (%v): %w", runID, err, store.ErrNotFound)
	}
	r.Version = version
	return r, nil
}

// queryRuns runs a SELECT run_id, run_json, version … query and decodes
// the rows, skipping unreadable ones. The run_id is read only for the
// warning, so that it names the run it skipped (as RunGet's does): the
// decode error alone did not say which row of the listing was unreadable.
func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]*durable.RunState, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*durable.RunState
	for rows.Next() {
		var runID string
		var text []byte
		var version int64
		if err := rows.Scan(&runID, &text, &version); err != nil {
			return nil, err
		}
		r, err := durable.UnmarshalRun(text)
		if err != nil {
			s.log.WarnContext(ctx, "skipping unreadable run_json", "run_id", keyTextOf(runID), "error", err)
			continue
		}
		r.Version = version
		out = append(out, r)
	}
	return out, rows.Err()
}

// where builds a conjunction of conditions with numbered arguments.
type where struct {
	conds []string
	args  []any
}

// arg adds v and returns its placeholder.
func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// eq adds column = value (a key column) unless value is empty.
func (w *where) eq(column, value string) {
	if value != "" {
		w.conds = append(w.conds, column+" = "+w.arg(keyText(value)))
	}
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// RunList implements store.RunStore: most recently updated first (then
// run_id descending, as the memory store breaks ties; runs without
// updated_at last, as SQLite orders NULLs).
func (s *Store) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	var w where
	w.eq("status", string(p.Status))
	w.eq("wait_reason", string(p.WaitReason))
	w.eq("workflow_id", p.WorkflowID)
	w.eq("session_id", p.SessionID)
	w.eq("parent_run_id", p.ParentID)
	w.eq("actor_id", p.ActorID)
	if len(p.WaitKeys) > 0 {
		w.conds = append(w.conds, "wait_key = ANY("+w.arg(keyTexts(p.WaitKeys))+"::text[])")
	}
	q := "SELECT run_id, run_json, version FROM runs" + w.String() +
		" ORDER BY updated_at DESC NULLS LAST, run_id DESC LIMIT " + w.arg(store.EffectiveLimit(p.Limit))
	runs, err := s.queryRuns(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing runs: %w", err)
	}
	return runs, nil
}

// RunListDue implements store.RunStore from the partial index on due_at.
func (s *Store) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	rows, err := s.pool.Query(ctx, `SELECT run_id, due_at FROM runs
		WHERE due_at IS NOT NULL AND due_at <= $1 ORDER BY due_at ASC, run_id ASC LIMIT $2`,
		p.Now, store.EffectiveLimit(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: listing due runs: %w", err)
	}
	defer rows.Close()
	var out []store.DueRun
	for rows.Next() {
		var d store.DueRun
		var due time.Time
		if err := rows.Scan(&d.RunID, &due); err != nil {
			return nil, fmt.Errorf("postgres: listing due runs: %w", err)
		}
		d.RunID = keyTextOf(d.RunID)
		d.Until = durable.NewTime(due)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: listing due runs: %w", err)
	}
	return out, nil
}

// RunNextDue implements store.RunStore.
func (s *Store) RunNextDue(ctx context.Context) (durable.Time, error) {
	var due *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT MIN(due_at) FROM runs WHERE due_at IS NOT NULL`).Scan(&due); err != nil {
		return durable.Time{}, fmt.Errorf("postgres: next due run: %w", err)
	}
	return timeOf(due), nil
}

// RunListChildren implements store.RunStore, oldest first: ORDER BY
// created_at, run_id as in the SQLite store.
func (s *Store) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	var w where
	w.conds = append(w.conds, "parent_run_id = "+w.arg(keyText(parentID)))
	w.eq("status", string(status))
	runs, err := s.queryRuns(ctx, "SELECT run_id, run_json, version FROM runs"+w.String()+
		" ORDER BY created_at ASC NULLS FIRST, run_id ASC", w.args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing children of %s: %w", parentID, err)
	}
	return runs, nil
}

// RunIndex implements store.RunStore from the row columns, without
// decoding run_json (vars._run_lifecycle has a column of its own).
func (s *Store) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	var w where
	w.eq("status", string(p.Status))
	w.eq("workflow_id", p.WorkflowID)
	w.eq("session_id", pyval.Strip(p.SessionID)) // as every store reads it (store.RunIndexParams)
	if p.RootOnly {
		w.conds = append(w.conds, "(parent_run_id IS NULL OR parent_run_id = '')")
	}
	if p.ExcludeWorkflowPrefix != "" {
		// starts_with (PostgreSQL 11) compares the texts themselves: no
		// LIKE pattern whose '%', '_' or '\' would need escaping. keyText
		// maps each byte on its own, so the column's text starts with
		// keyText(prefix) when the id starts with prefix (a prefix that
		// ends inside a UTF-8 sequence aside: its bytes are not UTF-8).
		w.conds = append(w.conds, "NOT starts_with(workflow_id, "+w.arg(keyText(p.ExcludeWorkflowPrefix))+")")
	}
	w.eq("actor_id", p.ActorID)
	if c := p.Before; c != nil {
		// The rows after c in ORDER BY updated_at DESC NULLS LAST, run_id
		// DESC (store.RunIndexCursor): a zero UpdatedAt is NULL.
		id := w.arg(keyText(c.RunID))
		if t := durable.NewTime(c.UpdatedAt.Time); t.IsZero() {
			w.conds = append(w.conds, "(updated_at IS NULL AND run_id < "+id+")")
		} else {
			at := w.arg(t.Time)
			w.conds = append(w.conds, "(updated_at < "+at+" OR (updated_at = "+at+" AND run_id < "+id+") OR updated_at IS NULL)")
		}
	}
	q := `SELECT run_id, workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id,
		session_id, created_at, updated_at, lifecycle_json FROM runs` + w.String() +
		" ORDER BY updated_at DESC NULLS LAST, run_id DESC LIMIT " + w.arg(store.EffectiveLimit(p.Limit))
	rows, err := s.pool.Query(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing run index: %w", err)
	}
	defer rows.Close()
	var out []store.RunIndexRow
	for rows.Next() {
		var row store.RunIndexRow
		var status string
		var reason, parent, actor, session, lifecycle *string
		var until, created, updated *time.Time
		if err := rows.Scan(&row.RunID, &row.WorkflowID, &status, &reason, &until, &parent, &actor,
			&session, &created, &updated, &lifecycle); err != nil {
			return nil, fmt.Errorf("postgres: listing run index: %w", err)
		}
		row.Status = durable.RunStatus(status)
		row.WaitReason = durable.WaitReason(deref(reason))
		row.WaitUntil = timeOf(until)
		row.RunID, row.WorkflowID = keyTextOf(row.RunID), keyTextOf(row.WorkflowID)
		row.ParentRunID, row.ActorID, row.SessionID = derefKey(parent), derefKey(actor), derefKey(session)
		row.CreatedAt, row.UpdatedAt = timeOf(created), timeOf(updated)
		if lifecycle != nil {
			if v, err := pyjson.Decode([]byte(*lifecycle)); err == nil {
				row.RunLifecycle = store.RunLifecycle(map[string]any{store.RunLifecycleKey: v})
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: listing run index: %w", err)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// RunDelete implements store.RunStore: the run row goes (with its
// deadline); its ledger and commands stay.
func (s *Store) RunDelete(ctx context.Context, runID string) (bool, error) {
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return false, fmt.Errorf("postgres: deleting run %s: %w", runID, err)
	}
	defer done()
	tag, err := conn.Exec(ctx, `DELETE FROM runs WHERE run_id = $1`, keyText(runID))
	if err != nil {
		return false, fmt.Errorf("postgres: deleting run %s: %w", runID, err)
	}
	return tag.RowsAffected() > 0, nil
}
