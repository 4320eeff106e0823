package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// runColumns are the columns RunCommit writes, in argument order (see
// runArgs); version and created_at are handled by each statement.
const runColumns = `workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id,
	session_id, updated_at, run_json, wait_key`

// writerStmts are prepared once on the writer's driver connection and run
// without database/sql (see wstmt).
type writerStmts struct {
	conn *sql.Conn // the writer connection; statements run inside its Raw
	args []driver.NamedValue

	begin, commit, rollback *wstmt

	runInsert    *wstmt // args: runArgs..., created_at, version, run_id
	runUpdate    *wstmt // args: updateArgs
	runUpdateAll *wstmt // the same, also setting the identity columns
	runVersion   *wstmt
	runDelete    *wstmt

	lastSeq      *wstmt // the run's highest seq (0 when none)
	ledgerInsert *wstmt
	headRaise    *wstmt
	ledgerDelete *wstmt
	// ListenLedger's notes of the store's own writes (listen.go).
	ledgerTop    *wstmt // the ledger's highest rowid
	deleteLogTop *wstmt // ledger_deletes' highest id
	lastRowid    *wstmt // the rowid of the row the last INSERT made
	headDelete   *wstmt
	waitUpsert   *wstmt
	waitDelete   *wstmt
	listMark     *wstmt // records a run whose list columns are stale
	listUnlisted *wstmt // sets the list columns of new runs
	listFlush    *wstmt // brings the list columns of runs_list_dirty's runs up to date
	listClear    *wstmt

	cmdInsert      *wstmt
	cmdSeqByID     *wstmt
	cmdDeleteByRun *wstmt
	cursorSave     *wstmt
	claimUpsert    *wstmt
	claimFrom      *wstmt
	claimOwner     *wstmt
	claimDelete    *wstmt
	claimRenew     *wstmt

	// redoApplied records the LSN the database holds (redoapply.go); the
	// one write statement never recorded in the redo log.
	redoApplied *wstmt
	redoLSN     *wstmt
	// schemaVersion reads the schema cookie: run by a shared store at the
	// start of each transaction (sharedTx), never by an owned one.
	schemaVersion *wstmt
	byName        map[string]*wstmt
	// rec, while not nil, receives every write statement run (see
	// startRecording).
	rec *redoEncoder
}

// writerStmt is one writer statement and the field it is prepared into.
type writerStmt struct {
	dst **wstmt
	// name identifies the statement in the redo log: never change one
	// (a newer binary replays an older one's log).
	name  string
	query string
}

// statements lists every writer statement.
func (w *writerStmts) statements() []writerStmt {
	return []writerStmt{
		{&w.begin, "begin", "BEGIN IMMEDIATE"},
		{&w.commit, "commit", "COMMIT"},
		{&w.rollback, "rollback", "ROLLBACK"},
		{&w.runInsert, "runInsert", `INSERT INTO runs (` + runColumns + `, created_at, version, run_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO NOTHING`},
		// A run's workflow, parent and session are fixed when it is created,
		// and SQLite rewrites an index entry whenever an UPDATE sets one of its
		// columns, even to the same value. So the usual update leaves them out
		// of SET and checks them in WHERE; runUpdateAll, which sets them, is
		// the fallback when they differ from the stored row. Its parameters
		// are plain ? in the order updateArgs gives (the driver looks up a
		// numbered parameter's name as a new Go string on every execution).
		{&w.runUpdate, "runUpdate", `UPDATE runs SET status = ?, wait_reason = ?, wait_until = ?,
		actor_id = ?, updated_at = ?, run_json = ?, wait_key = ?, version = version + 1
		WHERE run_id = ? AND version = ?
			AND workflow_id = ? AND parent_run_id IS ? AND session_id IS ?`},
		{&w.runUpdateAll, "runUpdateAll", `UPDATE runs SET workflow_id = ?, status = ?, wait_reason = ?, wait_until = ?,
		parent_run_id = ?, actor_id = ?, session_id = ?, updated_at = ?, run_json = ?, wait_key = ?,
		version = version + 1
		WHERE run_id = ? AND version = ?`},
		{&w.runVersion, "runVersion", `SELECT version FROM runs WHERE run_id = ?`},
		{&w.runDelete, "runDelete", `DELETE FROM runs WHERE run_id = ?`},
		// Seqs come from the primary key (run_id, seq), not from ledger_heads:
		// keeping the head row current cost two extra pages per commit. An
		// owning store raises the heads when it opens and closes the file
		// (backfillLedgerHeads), as Python 0.4.28 trusts them.
		{&w.lastSeq, "lastSeq", `SELECT COALESCE(MAX(seq), 0) FROM ledger WHERE run_id = ?`},
		{&w.ledgerInsert, "ledgerInsert", `INSERT INTO ledger (run_id, seq, record_json, completed_key) VALUES (?, ?, ?, ?)`},
		{&w.ledgerDelete, "ledgerDelete", `DELETE FROM ledger WHERE run_id = ?`},
		{&w.ledgerTop, "ledgerTop", `SELECT COALESCE(MAX(rowid), 0) FROM ledger`},
		{&w.deleteLogTop, "deleteLogTop", `SELECT COALESCE(MAX(id), 0) FROM ledger_deletes`},
		{&w.lastRowid, "lastRowid", `SELECT last_insert_rowid()`},
		{&w.headDelete, "headDelete", `DELETE FROM ledger_heads WHERE run_id = ?`},
		// A shared store keeps ledger_heads current too: a Python process
		// open on the database allocates its seqs from it.
		{&w.headRaise, "headRaise", `INSERT INTO ledger_heads (run_id, last_seq) VALUES (?, ?)
		ON CONFLICT (run_id) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq)`},
		{&w.waitUpsert, "waitUpsert", `INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET next_due_iso = excluded.next_due_iso,
		updated_at_iso = excluded.updated_at_iso, status = excluded.status`},
		{&w.waitDelete, "waitDelete", `DELETE FROM wait_index WHERE run_id = ?`},
		{&w.listMark, "listMark", `INSERT OR IGNORE INTO runs_list_dirty (run_id) VALUES (?)`},
		{&w.listUnlisted, "listUnlisted", `UPDATE runs SET list_status = status, list_updated_at = COALESCE(updated_at, '')
		WHERE list_status IS NULL`},
		{&w.listFlush, "listFlush", `UPDATE runs SET list_status = status, list_updated_at = COALESCE(updated_at, '')
		WHERE run_id IN (SELECT run_id FROM runs_list_dirty)`},
		{&w.listClear, "listClear", `DELETE FROM runs_list_dirty`},
		{&w.cmdInsert, "cmdInsert", `INSERT OR IGNORE INTO commands (command_id, run_id, type, payload_json, ts, client_id)
		VALUES (?, ?, ?, ?, ?, ?)`},
		{&w.cmdSeqByID, "cmdSeqByID", `SELECT seq FROM commands WHERE command_id = ?`},
		{&w.cmdDeleteByRun, "cmdDeleteByRun", `DELETE FROM commands WHERE run_id = ?`},
		{&w.cursorSave, "cursorSave", `INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (consumer_id) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`},
		{&w.claimUpsert, "claimUpsert", `INSERT INTO run_claims (run_id, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE run_claims.owner = excluded.owner OR run_claims.expires_at <= ? OR ?`},
		{&w.claimFrom, "claimFrom", `INSERT INTO run_claims (run_id, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE run_claims.owner = excluded.owner OR run_claims.expires_at <= ? OR run_claims.owner = ?`},
		{&w.claimOwner, "claimOwner", `SELECT owner FROM run_claims WHERE run_id = ?`},
		{&w.claimDelete, "claimDelete", `DELETE FROM run_claims WHERE run_id = ? AND owner = ?`},
		{&w.claimRenew, "claimRenew", `UPDATE run_claims SET expires_at = ? WHERE run_id = ? AND owner = ?`},
		{&w.redoApplied, "redoApplied", `UPDATE redo_applied SET lsn = ? WHERE id = 1`},
		{&w.redoLSN, "redoLSN", `SELECT lsn FROM redo_applied WHERE id = 1`},
		{&w.schemaVersion, "schemaVersion", `PRAGMA schema_version`},
	}
}

// prepare prepares every statement on c's driver connection.
func (w *writerStmts) prepare(ctx context.Context, c *sql.Conn) error {
	w.conn = c
	return c.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot prepare with a context", dc)
		}
		w.byName = map[string]*wstmt{}
		for _, ws := range w.statements() {
			st, err := pc.PrepareContext(ctx, ws.query)
			if err != nil {
				return fmt.Errorf("%s: %w", ws.query, err)
			}
			if *ws.dst, err = newWStmt(st, w, ws.name); err != nil {
				_ = st.Close()
				return fmt.Errorf("%s: %w", ws.query, err)
			}
			w.byName[ws.name] = *ws.dst
		}
		return nil
	})
}

// close closes the prepared statements (before the connection).
func (w *writerStmts) close() error {
	if w.conn == nil {
		return nil
	}
	var errs []error
	err := w.conn.Raw(func(any) error {
		for _, ws := range w.statements() {
			if *ws.dst != nil {
				errs = append(errs, (*ws.dst).st.Close())
				*ws.dst = nil
			}
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// run runs fn with the writer's driver connection held, as database/sql
// requires of driver-level calls: every wstmt call happens inside it.
// fn must not use the writer connection through database/sql.
func (w *writerStmts) run(fn func() error) error {
	return w.conn.Raw(func(any) error { return fn() })
}

// wstmt is a statement prepared on the writer's driver connection and run
// through the driver's own interfaces. database/sql would, on every call,
// look the connection's statement up under its locks, convert each
// argument through reflection-based checks into a fresh slice and wrap the
// result: 3–5 % of a W1–W3b run on SQLite (docs/benchmarks.md). The
// writer connection is pinned and used by one goroutine at a time (the
// writer turn), so the arguments reuse one slice.
type wstmt struct {
	st   driver.Stmt
	ex   driver.StmtExecContext
	q    driver.StmtQueryContext
	args *[]driver.NamedValue // the writer's scratch
	w    *writerStmts
	name string
	// unrecorded: transaction control and redoApplied, which the redo
	// log's replay does itself.
	unrecorded bool
}

func newWStmt(st driver.Stmt, w *writerStmts, name string) (*wstmt, error) {
	ex, ok := st.(driver.StmtExecContext)
	if !ok {
		return nil, fmt.Errorf("driver statement %T cannot execute with a context", st)
	}
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, fmt.Errorf("driver statement %T cannot query with a context", st)
	}
	unrecorded := name == "begin" || name == "commit" || name == "rollback" || name == "redoApplied"
	return &wstmt{st: st, ex: ex, q: q, args: &w.args, w: w, name: name, unrecorded: unrecorded}, nil
}

// bind fills the scratch arguments. The store passes only the types
// SQLite stores (text, integers, NULL, blobs); anything else is a bug,
// reported rather than converted.
func (s *wstmt) bind(args []any) ([]driver.NamedValue, error) {
	nv := (*s.args)[:0]
	for i, a := range args {
		switch v := a.(type) {
		case nil, string, int64, []byte, float64:
		case int:
			a = int64(v)
		default:
			clear(nv)
			return nil, fmt.Errorf("argument %d: unsupported type %T", i+1, a)
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	*s.args = nv
	return nv, nil
}

// exec runs the statement and returns the number of rows it changed.
func (s *wstmt) exec(ctx context.Context, args ...any) (int64, error) {
	res, err := s.execResult(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// execResult runs the statement and returns the driver's result.
func (s *wstmt) execResult(ctx context.Context, args ...any) (driver.Result, error) {
	nv, err := s.bind(args)
	if err != nil {
		return nil, err
	}
	defer clear(nv) // the scratch must not keep a run's JSON reachable
	if e := s.w.rec; e != nil && !s.unrecorded {
		e.str(s.name)
		if err := e.values(args); err != nil {
			return nil, err
		}
	}
	return s.ex.ExecContext(ctx, nv)
}

// startRecording makes the write statements run from now on append
// themselves to a redo record (redoStatements), until stopRecording,
// which returns the record's payload, or nil when none ran.
func (w *writerStmts) startRecording() {
	w.rec = &redoEncoder{b: []byte{redoStatements}}
}

// recorded reports whether a write statement ran since startRecording.
func (w *writerStmts) recorded() bool { return w.rec != nil && len(w.rec.b) > 1 }

// recordedLen is the size of the record the statements run since
// startRecording make.
func (w *writerStmts) recordedLen() int {
	if w.rec == nil {
		return 0
	}
	return len(w.rec.b)
}

func (w *writerStmts) stopRecording() []byte {
	e := w.rec
	w.rec = nil
	if e == nil || len(e.b) <= 1 {
		return nil
	}
	return e.b
}

// queryInt64 runs a query of one integer column and returns the first
// row's value, or sql.ErrNoRows.
func (s *wstmt) queryInt64(ctx context.Context, args ...any) (int64, error) {
	v, err := s.queryValue(ctx, args...)
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("query returned %T, want an integer", v)
	}
	return n, nil
}

// queryText runs a query of one text column and returns the first row's
// value, or sql.ErrNoRows.
func (s *wstmt) queryText(ctx context.Context, args ...any) (string, error) {
	v, err := s.queryValue(ctx, args...)
	if err != nil {
		return "", err
	}
	t, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("query returned %T, want text", v)
	}
	return t, nil
}

// queryValue runs a query of one column and returns the first row's
// value, or sql.ErrNoRows.
func (s *wstmt) queryValue(ctx context.Context, args ...any) (driver.Value, error) {
	nv, err := s.bind(args)
	if err != nil {
		return nil, err
	}
	defer clear(nv) // the scratch must not keep a run's JSON reachable
	rows, err := s.q.QueryContext(ctx, nv)
	if err != nil {
		return nil, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	err = rows.Next(dest)
	if cerr := rows.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	switch {
	case errors.Is(err, io.EOF):
		return nil, sql.ErrNoRows
	case err != nil:
		return nil, err
	case len(dest) != 1:
		return nil, fmt.Errorf("query returned %d columns, want 1", len(dest))
	}
	return dest[0], nil
}

// canonicalDue holds for a wait_index deadline in the form
// durable.FormatTime writes (no fraction for a whole second, else six
// digits), whose text order is time order. An all-zero fraction (Python's
// %f) is not that form: it sorts after the same instant written without
// one, as Now is. Migration 020's partial index lists the rows where it
// does not hold, and names the same text: the planner uses that index only
// for a query whose condition matches it.
const canonicalDue = `(next_due_iso GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]+00:00'` +
	` OR (next_due_iso GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]+00:00'` +
	` AND next_due_iso NOT GLOB '*.000000+00:00'))`

// foreignDueQuery lists the deadlines not in the canonical form, through
// migration 020's partial index, mostly empty: INDEXED BY, as the planner
// would rather scan idx_wait_index_next_due (every waiting run).
const foreignDueQuery = `SELECT run_id, next_due_iso FROM wait_index INDEXED BY wait_index_foreign_form WHERE NOT ` + canonicalDue

// readerStmts are the read statements, prepared on the writer connection
// and, for a shared store, on the reader pool (database/sql prepares each
// on a pool connection the first time it runs there).
type readerStmts struct {
	runGet        *sql.Stmt
	listDue       *sql.Stmt
	nextDue       *sql.Stmt
	foreignDue    *sql.Stmt
	ledgerList    *sql.Stmt
	ledgerCount   *sql.Stmt
	findCompleted *sql.Stmt
	completedKeys *sql.Stmt
	deletesSince  *sql.Stmt
	recordAt      *sql.Stmt
	cmdListAfter  *sql.Stmt
	cmdLastSeq    *sql.Stmt
	cursorLoad    *sql.Stmt
}

func (r *readerStmts) prepare(ctx context.Context, db preparer) error {
	var err error
	p := func(dst **sql.Stmt, q string) {
		if err != nil {
			return
		}
		if *dst, err = db.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("%s: %w", q, err)
		}
	}
	p(&r.runGet, `SELECT run_json, version FROM runs WHERE run_id = ?`)
	// wait_index holds rows of waiting runs only (see dropStaleDeadlines):
	// the due queries read its next_due_iso index alone, and the rows in
	// another form through migration 020's partial index. listDue has no
	// LIMIT: the index gives its rows in order, and the reader stops once
	// it has as many due runs as it wants, which a LIMIT could not count
	// (a deadline no parser reads is passed over; see dueRows).
	p(&r.listDue, `SELECT run_id, next_due_iso FROM wait_index
		WHERE next_due_iso <= ? AND `+canonicalDue+` ORDER BY next_due_iso ASC, run_id ASC`)
	p(&r.nextDue, `SELECT run_id, next_due_iso FROM wait_index WHERE `+canonicalDue+` ORDER BY next_due_iso ASC`)
	p(&r.foreignDue, foreignDueQuery)
	p(&r.ledgerList, `SELECT seq, record_json FROM ledger WHERE run_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?`)
	p(&r.ledgerCount, `SELECT COALESCE(MAX(seq), 0) FROM ledger WHERE run_id = ?`)
	// Every matching row, not LIMIT 1: one that does not decode is skipped
	// (scanCompleted), and the next may.
	p(&r.findCompleted, `SELECT seq, record_json FROM ledger WHERE run_id = ? AND completed_key = ?
		ORDER BY seq ASC`)
	// Every row from a seq on, so that the keyIndex knows how far it has
	// read (and, in a shared store, that its last row is still there), and
	// whether a row without a key is a Python row still to be indexed
	// (python_unindexed, listed in the same transaction as the row).
	p(&r.completedKeys, `SELECT seq, completed_key, completed_key IS NULL AND EXISTS (SELECT 1 FROM python_unindexed u
		WHERE u.run_id = ledger.run_id AND u.seq = ledger.seq) FROM ledger WHERE run_id = ? AND seq >= ? ORDER BY seq ASC`)
	// The delete log's top, whether it holds a delete of the run past a
	// mark, and its bottom (the log keeps its last 10,000 entries), for a
	// shared store's keyIndex (ledgerDeletedSince).
	p(&r.deletesSince, `SELECT COALESCE((SELECT MAX(id) FROM ledger_deletes), 0),
		EXISTS (SELECT 1 FROM ledger_deletes WHERE id > ? AND run_id = ?), COALESCE((SELECT MIN(id) FROM ledger_deletes), 0)`)
	p(&r.recordAt, `SELECT record_json FROM ledger WHERE run_id = ? AND seq = ?`)
	p(&r.cmdListAfter, `SELECT seq, command_id, run_id, type, payload_json, ts, client_id
		FROM commands WHERE seq > ? ORDER BY seq ASC LIMIT ?`)
	p(&r.cmdLastSeq, `SELECT COALESCE(MAX(seq), 0) FROM commands`)
	p(&r.cursorLoad, `SELECT cursor FROM command_cursors WHERE consumer_id = ?`)
	return err
}

func (r *readerStmts) close() error {
	return closeStmts(r.runGet, r.listDue, r.nextDue, r.foreignDue, r.ledgerList, r.ledgerCount, r.findCompleted,
		r.completedKeys, r.deletesSince, r.recordAt,
		r.cmdListAfter, r.cmdLastSeq, r.cursorLoad)
}

// preparer is a *sql.DB or a *sql.Conn.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

func closeStmts(stmts ...*sql.Stmt) error {
	var errs []error
	for _, st := range stmts {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
