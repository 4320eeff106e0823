package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// RunCommit implements store.RunStore in one transaction: the version
// check and the run row (an INSERT for a create, an UPDATE … WHERE
// version = ? otherwise), the ledger records, and the run's wait_index
// row. On any error p is unchanged, and nothing is written unless the
// error says the write committed but could not be synced (a failing disk
// under synchronous=FULL): the store's reads then answer the committed
// state, as the database holds it.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run == nil || p.Run.RunID == "" {
		return errors.New("sqlite: commit: run id is required")
	}
	if p.Create {
		if err := store.CheckNewRunIDs(p.Run); err != nil {
			return fmt.Errorf("sqlite: creating run: %w", err)
		}
	}
	if err := store.CheckRunReadable(p.Run); err != nil {
		return fmt.Errorf("sqlite: committing run %s: %w", p.Run.RunID, err)
	}
	r := p.Run
	buf := pyjson.GetBuffer()
	defer pyjson.PutBuffer(buf)
	var err error
	if *buf, err = durable.AppendRun(*buf, r, pyjson.Line); err != nil {
		return fmt.Errorf("sqlite: committing run %s: %w", r.RunID, err)
	}
	runEnd := len(*buf)
	recs, err := encodeRecords(buf, p.Records)
	if err != nil {
		return fmt.Errorf("sqlite: committing run %s: %w", r.RunID, err)
	}
	runJSON := text(*buf, 0, runEnd) // after the records: *buf no longer grows
	if s.redo != nil {
		commit := s.commitFromCache
		if p.Create && !p.RandomID {
			commit = func(p *store.CommitParams, runJSON string, recs []encodedRecord) (bool, error) {
				return s.createFromDatabase(ctx, p, runJSON, recs)
			}
		}
		if handled, err := commit(p, runJSON, recs); handled {
			if err != nil {
				return fmt.Errorf("sqlite: committing run %s at version %d: %w", r.RunID, r.Version, err)
			}
			return nil
		}
	}
	var firstSeq int64
	err = s.writeThen(ctx, func(ctx context.Context) error {
		args := runArgs(r, runJSON)
		if p.Create {
			args = append(args, nullString(r.CreatedAt.String()), r.Version+1, r.RunID)
			n, err := s.w.runInsert.exec(ctx, args...)
			if err != nil {
				return err
			}
			if n == 0 {
				return store.ErrAlreadyExists
			}
		} else {
			args = append(args, r.RunID, r.Version)
			n, err := s.w.runUpdate.exec(ctx, updateArgs(args)...)
			if err == nil && n == 0 {
				// A stale version, or a row whose identity columns differ.
				n, err = s.w.runUpdateAll.exec(ctx, args...)
			}
			if err != nil {
				return err
			}
			if n == 0 {
				return s.staleVersion(ctx, r.RunID, r.Version)
			}
		}
		if err := s.markListStale(ctx, r.RunID, p.Create); err != nil {
			return err
		}
		if firstSeq, err = s.appendRecords(ctx, r.RunID, recs); err != nil {
			return err
		}
		return s.indexDeadline(ctx, r, p.Create)
	}, func() {
		_, indexed := store.Deadline(r)
		s.cache.putState(r.RunID, strings.Clone(runJSON), r.Version+1, indexed) // runJSON views a pooled buffer
		s.cacheCommitted(r, p.Records, firstSeq, recs)
	})
	if err != nil {
		return fmt.Errorf("sqlite: committing run %s at version %d: %w", r.RunID, r.Version, err)
	}
	r.Version++
	setSeqs(p.Records, firstSeq)
	return nil
}

// staleVersion tells why an UPDATE … WHERE version = ? changed no row.
func (s *Store) staleVersion(ctx context.Context, runID string, want int64) error {
	have, err := s.w.runVersion.queryInt64(ctx, runID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return err
	default:
		return fmt.Errorf("stored version is %d: %w", have, store.ErrConflict)
	}
}

// runArgs returns the values of runColumns for r, filled as the Python
// store fills them (wait_until only for WAIT_UNTIL waits), plus wait_key.
func runArgs(r *durable.RunState, runJSON string) []any {
	var waitReason, waitUntil, waitKey any
	if w := r.Waiting; w != nil {
		waitReason = nullString(string(w.Reason))
		if w.Reason == durable.WaitUntil {
			waitUntil = nullString(w.Until.String())
		}
		// '' rather than NULL for a wait without a key: NULL in a waiting
		// row is how Python's writes look, and its triggers parse run_json
		// (twice) to fill the column; no look-up by key matches ''.
		waitKey = w.WaitKey
	}
	args := make([]any, 0, 13)
	return append(args, r.WorkflowID, string(r.Status), waitReason, waitUntil,
		nullString(r.ParentRunID), nullString(r.ActorID), nullString(r.SessionID),
		nullString(r.UpdatedAt.String()), runJSON, waitKey) // string: TEXT, not BLOB
}

// updateArgs reorders runArgs plus run_id and the expected version into
// runUpdate's parameters: the changing columns, the key and version, then
// the identity columns it checks.
func updateArgs(a []any) []any {
	return []any{a[1], a[2], a[3], a[5], a[7], a[8], a[9], a[10], a[11], a[0], a[4], a[6]}
}

// indexDeadline keeps r's wait_index row: present, with the normalised
// deadline, for a waiting run with an until (any wait reason), absent
// otherwise. A created run has no row to delete.
func (s *Store) indexDeadline(ctx context.Context, r *durable.RunState, created bool) error {
	if until, ok := store.Deadline(r); ok {
		_, err := s.w.waitUpsert.exec(ctx, r.RunID, until.String(), r.UpdatedAt.String(),
			waitIndexStatus(r.Waiting.Reason))
		return err
	}
	if created || (s.cache != nil && s.cache.unindexed(r.RunID)) {
		return nil // no row to delete
	}
	_, err := s.w.waitDelete.exec(ctx, r.RunID)
	return err
}

// waitIndexStatus is wait_index.status: "waiting_until" as Python writes
// it for WAIT_UNTIL, "waiting_<reason>" for the deadlines Python does not
// index (a WAIT_EVENT timeout).
func waitIndexStatus(reason durable.WaitReason) string {
	return "waiting_" + string(reason)
}

// RunGet implements store.RunStore. A row whose run_json cannot be
// decoded counts as absent, as in the Python store.
func (s *Store) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	var cached *durable.RunState
	if s.fromCache(func() bool { cached = s.cache.state(runID); return cached != nil }) {
		return cached, nil
	}
	rd, err := s.readRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: loading run %s: %w", runID, err)
	}
	defer rd.release()
	if rd.cached(func(c *hotCache) { cached = c.state(runID) }); cached != nil {
		return cached, nil
	}
	var text string
	var version int64
	err = rd.runGet.QueryRowContext(ctx, runID).Scan(&text, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: run %s: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: loading run %s: %w", runID, err)
	}
	r, err := durable.UnmarshalRunString(text)
	if err != nil {
		s.log.WarnContext(ctx, "unreadable run_json", "run_id", runID, "error", err)
		return nil, fmt.Errorf("sqlite: run %s: unreadable run_json (%v): %w", runID, err, store.ErrNotFound)
	}
	r.Version = version
	_, indexed := store.Deadline(r)
	rd.keep(runID, func(c *hotCache) { c.putState(runID, text, version, indexed) })
	return r, nil
}

// queryRuns runs a SELECT run_json, version, run_id … query and decodes
// the rows, skipping unreadable ones (logged with their run_id: the
// decode error alone does not say which row a foreign writer damaged).
func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]*durable.RunState, error) {
	return s.queryRunsBuilt(ctx, false, func(querier) (string, []any, error) { return q, args, nil })
}

// queryRunsBuilt is queryRuns with a query built in the read's turn (it
// may read the database to build it); lists tells that the query reads the
// list columns (see listRead).
func (s *Store) queryRunsBuilt(ctx context.Context, lists bool, build func(db querier) (string, []any, error)) ([]*durable.RunState, error) {
	rd, err := s.readFor(ctx, lists)
	if err != nil {
		return nil, err
	}
	defer rd.release()
	q, args, err := build(rd.db)
	if err != nil {
		return nil, err
	}
	rows, err := rd.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*durable.RunState
	for rows.Next() {
		var text sql.RawBytes
		var version int64
		var runID sql.RawBytes // raw: a foreign writer's NULL must not fail the list
		if err := rows.Scan(&text, &version, &runID); err != nil {
			return nil, err
		}
		r, err := durable.UnmarshalRun(text)
		if err != nil {
			s.log.WarnContext(ctx, "skipping unreadable run_json", "run_id", string(runID), "error", err)
			continue
		}
		r.Version = version
		out = append(out, r)
	}
	return out, rows.Err()
}

// where builds a conjunction of conditions with their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) eq(column, value string) {
	if value != "" {
		w.conds = append(w.conds, column+" = ?")
		w.args = append(w.args, value)
	}
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// listPath is how a list of runs, newest first, is answered.
type listPath int

const (
	// byOtherIndex: a selective filter leads an index of its own (wait
	// keys, session, parent). The rows it finds are sorted by their
	// updated_at, and the list columns are not read, so no flush is
	// needed (event delivery lists by wait key on every emit).
	byOtherIndex listPath = iota
	// byListIndex: a status or workflow filter leads a list index, read
	// in order after a flush (lists.go).
	byListIndex
	// byMerge: no filter leads an index; the newest runs of each status
	// are merged from the status list index, after a flush.
	byMerge
)

// readsLists reports whether the path reads the list columns.
func (p listPath) readsLists() bool { return p != byOtherIndex }

// statusFilter adds the filter on status: on list_status where the path
// reads the list columns (equal to status after the flush, and the
// column the index has).
func (w *where) statusFilter(path listPath, status durable.RunStatus) {
	if path.readsLists() {
		w.eq("list_status", string(status))
	} else {
		w.eq("status", string(status))
	}
}

// listTime is the updated_at a list on path orders by: list_updated_at
// on the list indexes (updated_at once flushed, the empty text for NULL),
// and the same coalescing of updated_at on the other path, whose rows are
// sorted after the look-up anyway, so that a run without updated_at (NULL,
// or the empty text in the list columns) is ordered alike on both paths:
// last, by run_id, as store.RunIndexCursor says.
func listTime(path listPath) string {
	if path.readsLists() {
		return "list_updated_at"
	}
	return "COALESCE(updated_at, '')"
}

// listOrder is the ORDER BY of a list on path.
func listOrder(path listPath) string {
	return " ORDER BY " + listTime(path) + " DESC, run_id DESC"
}

// before adds the keyset condition of c (store.RunIndexParams.Before):
// the rows strictly after c in listOrder(path). The cursor's time is
// compared as the text this store writes (durable.FormatTime; the empty
// text for no time), whose order is time order.
func (w *where) before(path listPath, c *store.RunIndexCursor) {
	if c == nil {
		return
	}
	t, col := durable.NewTime(c.UpdatedAt.Time).String(), listTime(path)
	w.conds = append(w.conds, "("+col+" < ? OR ("+col+" = ? AND run_id < ?))")
	w.args = append(w.args, t, t, c.RunID)
}

// notPrefixed adds the exclusion of the runs whose workflow id starts with
// prefix (store.RunIndexParams.ExcludeWorkflowPrefix), compared as bytes:
// no LIKE pattern whose '%', '_' or escape would need quoting, and
// length() and substr() on text would count characters only up to a NUL.
func (w *where) notPrefixed(column, prefix string) {
	if prefix != "" {
		w.conds = append(w.conds, "substr(CAST("+column+" AS BLOB), 1, ?) <> ?")
		w.args = append(w.args, len(prefix), []byte(prefix))
	}
}

// pathOf chooses the path of a list with the given filters.
func pathOf(other bool, status durable.RunStatus, workflowID string) listPath {
	switch {
	case other:
		return byOtherIndex
	case status != "" || workflowID != "":
		return byListIndex
	default:
		return byMerge
	}
}

// runListWhere is RunList's filter and its path.
func runListWhere(p *store.RunListParams) (w where, path listPath) {
	path = pathOf(len(p.WaitKeys) > 0 || p.SessionID != "" || p.ParentID != "", p.Status, p.WorkflowID)
	w.statusFilter(path, p.Status)
	if p.WaitReason == durable.WaitEvent {
		// A literal, so that SQLite may use idx_runs_event_wait_key, whose
		// rows are those of event waits.
		w.conds = append(w.conds, "wait_reason = 'event'")
	} else {
		w.eq("wait_reason", string(p.WaitReason))
	}
	w.eq("workflow_id", p.WorkflowID)
	w.eq("session_id", p.SessionID)
	w.eq("parent_run_id", p.ParentID)
	w.eq("actor_id", p.ActorID)
	if len(p.WaitKeys) > 0 {
		// '' is the column of a wait without a key (runArgs): an empty key
		// in the filter matches no run, as on every store.
		w.conds = append(w.conds, "wait_key IN (?"+strings.Repeat(", ?", len(p.WaitKeys)-1)+") AND wait_key <> ''")
		for _, k := range p.WaitKeys {
			w.args = append(w.args, k)
		}
	}
	w.listIndexed(path, p.Status)
	return w, path
}

// listIndexed adds, to a list by workflow alone, the condition that lets
// SQLite use the partial workflow index (a run has list entries once its
// list columns are set; after the flush every run has).
func (w *where) listIndexed(path listPath, status durable.RunStatus) {
	if path == byListIndex && status == "" {
		w.conds = append(w.conds, "list_status IS NOT NULL")
	}
}

// RunList implements store.RunStore: ORDER BY updated_at DESC (then
// run_id DESC, as the memory store breaks ties).
func (s *Store) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	if len(p.WaitKeys) > 0 {
		if err := s.indexPythonWrites(ctx); err != nil {
			return nil, fmt.Errorf("sqlite: listing runs: %w", err)
		}
	}
	w, path := runListWhere(p)
	runs, err := s.queryRunsBuilt(ctx, path.readsLists(), func(db querier) (string, []any, error) {
		return recentFirst(ctx, db, "run_json, version, run_id", w, path, store.EffectiveLimit(p.Limit))
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing runs: %w", err)
	}
	return runs, nil
}

// RunListDue implements store.RunStore from wait_index: the deadlines at
// or before p.Now, compared as normalised text (see the package doc), and
// those in another form by their parsed times.
func (s *Store) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	if err := s.indexPythonWrites(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	if s.redo != nil {
		return s.listDueOverQueue(ctx, p)
	}
	rd, err := s.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	defer rd.release()
	limit := store.EffectiveLimit(p.Limit)
	out, err := s.dueRows(ctx, rd.listDue, limit, nil, durable.FormatTime(p.Now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	foreign, err := s.dueRows(ctx, rd.foreignDue, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	return addForeignDue(out, foreign, p.Now, limit), nil
}

// RunNextDue implements store.RunStore.
func (s *Store) RunNextDue(ctx context.Context) (durable.Time, error) {
	if err := s.indexPythonWrites(ctx); err != nil {
		return durable.Time{}, fmt.Errorf("sqlite: next due run: %w", err)
	}
	rd, err := s.read(ctx)
	if err != nil {
		return durable.Time{}, fmt.Errorf("sqlite: next due run: %w", err)
	}
	defer rd.release()
	// The first canonical deadline that reads as a time (the form's digits
	// can still spell no date), and the foreign ones.
	first, err := s.dueRows(ctx, rd.nextDue, 1, nil)
	if err != nil {
		return durable.Time{}, fmt.Errorf("sqlite: next due run: %w", err)
	}
	foreign, err := s.dueRows(ctx, rd.foreignDue, 0, nil)
	if err != nil {
		return durable.Time{}, fmt.Errorf("sqlite: next due run: %w", err)
	}
	var next durable.Time
	for _, d := range append(first, foreign...) {
		if next.IsZero() || d.Until.Before(next.Time) {
			next = d.Until
		}
	}
	return next, nil
}

// dueRows reads the (run_id, deadline) rows stmt gives for args as due
// runs, passing over the runs skip names (when not nil) and deadlines no
// parser reads (dueTime); at most max of them when max > 0. The rows
// passed over do not count against max: the statements have no LIMIT and
// the reading stops at the max-th due run, so a run behind an unreadable
// deadline is still listed (a short listing tells the scheduler nothing
// else is due). With rd.foreignDue it reads the wait_index rows whose
// deadline is not in the canonical form (Python stores a WAIT_UNTIL's
// until as the node gave it; migrations 015, 020): none unless Python
// writes to the database, the query reading an empty partial index.
func (s *Store) dueRows(ctx context.Context, stmt *sql.Stmt, max int, skip func(runID string) bool, args ...any) ([]store.DueRun, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.DueRun
	for (max <= 0 || len(out) < max) && rows.Next() {
		var id, due string
		if err := rows.Scan(&id, &due); err != nil {
			return nil, err
		}
		if skip != nil && skip(id) {
			continue
		}
		if t, ok := s.dueTime(id, due); ok {
			out = append(out, store.DueRun{RunID: id, Until: t})
		}
	}
	return out, rows.Err()
}

// addForeignDue merges into due (canonical rows, oldest first, at most
// limit) the foreign deadlines at or before now, and keeps the oldest
// limit, ordered by time and then run id as the canonical query orders.
// A run in both (its deadline rewritten by another writer between the two
// queries, each its own snapshot) is listed once, at its canonical row.
func addForeignDue(due, foreign []store.DueRun, now time.Time, limit int) []store.DueRun {
	n := len(due)
	for _, d := range foreign {
		if !d.Until.After(now) && !slices.ContainsFunc(due[:n], func(c store.DueRun) bool { return c.RunID == d.RunID }) {
			due = append(due, d)
		}
	}
	if len(due) == n {
		return due
	}
	slices.SortFunc(due, compareDue)
	return due[:min(len(due), limit)]
}

// compareDue orders due runs by deadline, then run id.
func compareDue(a, b store.DueRun) int {
	return cmp.Or(a.Until.Compare(b.Until.Time), strings.Compare(a.RunID, b.RunID))
}

// dueTime reads a wait_index deadline. Python stores a WAIT_UNTIL's until
// as the node gave it; a text no parser reads is passed over (and logged)
// rather than failing the listing, so it never falls due, as our JSON and
// memory stores treat it, and the runs behind it are still released.
func (s *Store) dueTime(runID, text string) (durable.Time, bool) {
	t, err := durable.ParseTime(text)
	if err != nil {
		s.log.Warn("passing over a due-index deadline that cannot be read", "run_id", runID, "until", text)
		return durable.Time{}, false
	}
	return t, true
}

// RunListChildren implements store.RunStore, oldest first: ORDER BY
// created_at, run_id as in the Python store.
func (s *Store) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	var w where
	w.conds = append(w.conds, "parent_run_id = ?")
	w.args = append(w.args, parentID)
	w.eq("status", string(status))
	runs, err := s.queryRuns(ctx, "SELECT run_json, version, run_id FROM runs"+w.String()+" ORDER BY created_at ASC, run_id ASC", w.args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing children of %s: %w", parentID, err)
	}
	return runs, nil
}

// runIndexWhere is RunIndex's filter and its path.
func runIndexWhere(p *store.RunIndexParams) (w where, path listPath) {
	session := pyval.Strip(p.SessionID) // as every store reads it (store.RunIndexParams)
	path = pathOf(session != "", p.Status, p.WorkflowID)
	w.statusFilter(path, p.Status)
	w.eq("workflow_id", p.WorkflowID)
	w.eq("session_id", session)
	if p.RootOnly {
		w.conds = append(w.conds, "(parent_run_id IS NULL OR parent_run_id = '')")
	}
	w.notPrefixed("workflow_id", p.ExcludeWorkflowPrefix)
	w.eq("actor_id", p.ActorID)
	w.before(path, p.Before)
	w.listIndexed(path, p.Status)
	return w, path
}

// RunIndex implements store.RunStore from the row columns, without
// decoding run_json: SQLite extracts vars._run_lifecycle (and the until of
// a waiting run that is not a WAIT_UNTIL, which has no column).
func (s *Store) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	w, path := runIndexWhere(p)
	const cols = `run_id, workflow_id, status, wait_reason,
		CASE WHEN wait_until IS NOT NULL THEN wait_until
			WHEN status = 'waiting' AND json_valid(run_json, 2) THEN json_extract(run_json, '$.waiting.until') END,
		parent_run_id, actor_id, session_id, created_at, updated_at,
		CASE WHEN json_valid(run_json, 2) AND json_type(run_json, '$.vars._run_lifecycle') = 'object'
			THEN json_extract(run_json, '$.vars._run_lifecycle') END`
	rd, err := s.readFor(ctx, path.readsLists())
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing run index: %w", err)
	}
	defer rd.release()
	q, args, err := recentFirst(ctx, rd.db, cols, w, path, store.EffectiveLimit(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing run index: %w", err)
	}
	rows, err := rd.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing run index: %w", err)
	}
	defer rows.Close()
	var out []store.RunIndexRow
	for rows.Next() {
		var row store.RunIndexRow
		var status string
		var reason, until, parent, actor, session, created, updated, lifecycle sql.NullString
		if err := rows.Scan(&row.RunID, &row.WorkflowID, &status, &reason, &until, &parent, &actor,
			&session, &created, &updated, &lifecycle); err != nil {
			return nil, fmt.Errorf("sqlite: listing run index: %w", err)
		}
		row.Status = durable.RunStatus(status)
		row.WaitReason = durable.WaitReason(reason.String)
		row.WaitUntil = parseTimeLenient(until.String)
		row.ParentRunID, row.ActorID, row.SessionID = parent.String, actor.String, session.String
		row.CreatedAt, row.UpdatedAt = parseTimeLenient(created.String), parseTimeLenient(updated.String)
		if lifecycle.Valid {
			if v, err := pyjson.Decode([]byte(lifecycle.String)); err == nil {
				row.RunLifecycle = store.RunLifecycle(map[string]any{store.RunLifecycleKey: v})
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing run index: %w", err)
	}
	return out, nil
}

// recentFirst returns the query of the runs matching w, most recently
// updated first (ties by run_id, descending), at most limit of them.
//
// On byOtherIndex and byListIndex a filter column leads an index and
// SQLite answers the plain query from it. On byMerge the plain query would
// read and sort the whole table, so the query is a merge over
// idx_runs_status_updated instead: the newest limit rows of each status,
// read from the index in order, then the newest limit of those. No index
// of all runs by time is needed for it; the distinct statuses are found
// first by seeking the same index.
func recentFirst(ctx context.Context, db querier, cols string, w where, path listPath, limit int) (string, []any, error) {
	order := listOrder(path) + " LIMIT ?"
	if path != byMerge {
		return "SELECT " + cols + " FROM runs" + w.String() + order, append(w.args, limit), nil
	}
	statuses, err := distinctStatuses(ctx, db)
	if err != nil {
		return "", nil, err
	}
	if len(statuses) == 0 {
		return "SELECT " + cols + " FROM runs WHERE 0", nil, nil
	}
	var q strings.Builder
	var args []any
	q.WriteString("SELECT " + cols + " FROM runs WHERE rowid IN (")
	for i, st := range statuses {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		part := where{conds: append([]string{"list_status = ?"}, w.conds...)}
		q.WriteString("SELECT rowid FROM (SELECT rowid FROM runs" + part.String() + order + ")")
		args = append(append(append(args, st), w.args...), limit)
	}
	q.WriteString(")" + order)
	return q.String(), append(args, limit), nil
}

// distinctStatuses returns the list statuses present in runs, one index
// seek per status (a scan of idx_runs_status_updated would read every
// entry).
func distinctStatuses(ctx context.Context, db querier) ([]string, error) {
	rows, err := db.QueryContext(ctx, `WITH RECURSIVE st(s) AS (
			SELECT (SELECT MIN(list_status) FROM runs WHERE list_status IS NOT NULL)
			UNION ALL
			SELECT (SELECT MIN(list_status) FROM runs WHERE list_status > st.s) FROM st WHERE st.s IS NOT NULL)
		SELECT s FROM st WHERE s IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("reading run statuses: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			return nil, fmt.Errorf("reading run statuses: %w", err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// parseTimeLenient parses a stored timestamp; "", "None" (a Python quirk)
// and unparsable text give the zero Time.
func parseTimeLenient(s string) durable.Time {
	if s == "" || s == "None" {
		return durable.Time{}
	}
	t, err := durable.ParseTime(s)
	if err != nil {
		return durable.Time{}
	}
	return t
}

// RunDelete implements store.RunStore: the run row and its wait_index row
// go; its ledger and commands stay.
func (s *Store) RunDelete(ctx context.Context, runID string) (bool, error) {
	var existed bool
	err := s.writeThen(ctx, func(ctx context.Context) error {
		n, err := s.w.runDelete.exec(ctx, runID)
		if err != nil {
			return err
		}
		existed = n > 0
		_, err = s.w.waitDelete.exec(ctx, runID)
		return err
	}, func() { s.cache.dropState(runID) })
	if err != nil {
		return false, fmt.Errorf("sqlite: deleting run %s: %w", runID, err)
	}
	return existed, nil
}
