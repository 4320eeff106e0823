package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// runColumns are the columns RunCommit writes, in argument order (see
// runArgs); version and created_at are handled by each statement.
const runColumns = `workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id,
	session_id, updated_at, run_json, wait_key`

// writerStmts are prepared once on the writer connection.
type writerStmts struct {
	begin, commit, rollback *sql.Stmt

	runInsert    *sql.Stmt // args: runArgs..., created_at, version, run_id
	runUpdate    *sql.Stmt // args: runArgs..., run_id, expected version
	runUpdateAll *sql.Stmt // the same, also setting the identity columns
	runVersion   *sql.Stmt
	runDelete    *sql.Stmt

	lastSeq      *sql.Stmt // the run's highest seq (0 when none)
	ledgerInsert *sql.Stmt
	waitUpsert   *sql.Stmt
	waitDelete   *sql.Stmt

	cmdInsert   *sql.Stmt
	cmdSeqByID  *sql.Stmt
	cursorSave  *sql.Stmt
	claimUpsert *sql.Stmt
	claimDelete *sql.Stmt
}

func (w *writerStmts) prepare(ctx context.Context, c *sql.Conn) error {
	var err error
	p := func(dst **sql.Stmt, q string) {
		if err != nil {
			return
		}
		if *dst, err = c.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("%s: %w", q, err)
		}
	}
	p(&w.begin, "BEGIN IMMEDIATE")
	p(&w.commit, "COMMIT")
	p(&w.rollback, "ROLLBACK")
	p(&w.runInsert, `INSERT INTO runs (`+runColumns+`, created_at, version, run_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO NOTHING`)
	// A run's workflow, parent and session are fixed when it is created,
	// and SQLite rewrites an index entry whenever an UPDATE sets one of its
	// columns, even to the same value. So the usual update leaves them out
	// of SET and checks them in WHERE; runUpdateAll, which sets them, is
	// the fallback when they differ from the stored row.
	p(&w.runUpdate, `UPDATE runs SET status = ?2, wait_reason = ?3, wait_until = ?4,
		actor_id = ?6, updated_at = ?8, run_json = ?9, wait_key = ?10, version = version + 1
		WHERE run_id = ?11 AND version = ?12
			AND workflow_id = ?1 AND parent_run_id IS ?5 AND session_id IS ?7`)
	p(&w.runUpdateAll, `UPDATE runs SET workflow_id = ?, status = ?, wait_reason = ?, wait_until = ?,
		parent_run_id = ?, actor_id = ?, session_id = ?, updated_at = ?, run_json = ?, wait_key = ?,
		version = version + 1
		WHERE run_id = ? AND version = ?`)
	p(&w.runVersion, `SELECT version FROM runs WHERE run_id = ?`)
	p(&w.runDelete, `DELETE FROM runs WHERE run_id = ?`)
	// Seqs come from the primary key (run_id, seq), not from ledger_heads:
	// keeping the head row current cost two extra pages per commit. Python
	// back-fills ledger_heads from MAX(seq) whenever it opens a database.
	p(&w.lastSeq, `SELECT COALESCE(MAX(seq), 0) FROM ledger WHERE run_id = ?`)
	p(&w.ledgerInsert, `INSERT INTO ledger (run_id, seq, record_json, completed_key) VALUES (?, ?, ?, ?)`)
	p(&w.waitUpsert, `INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET next_due_iso = excluded.next_due_iso,
		updated_at_iso = excluded.updated_at_iso, status = excluded.status`)
	p(&w.waitDelete, `DELETE FROM wait_index WHERE run_id = ?`)
	p(&w.cmdInsert, `INSERT OR IGNORE INTO commands (command_id, run_id, type, payload_json, ts, client_id)
		VALUES (?, ?, ?, ?, ?, ?)`)
	p(&w.cmdSeqByID, `SELECT seq FROM commands WHERE command_id = ?`)
	p(&w.cursorSave, `INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (consumer_id) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`)
	p(&w.claimUpsert, `INSERT INTO run_claims (run_id, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE run_claims.owner = excluded.owner OR run_claims.expires_at <= ?`)
	p(&w.claimDelete, `DELETE FROM run_claims WHERE run_id = ? AND owner = ?`)
	return err
}

func (w *writerStmts) close() error {
	return closeStmts(w.begin, w.commit, w.rollback, w.runInsert, w.runUpdate, w.runUpdateAll, w.runVersion,
		w.runDelete, w.lastSeq, w.ledgerInsert, w.waitUpsert, w.waitDelete, w.cmdInsert,
		w.cmdSeqByID, w.cursorSave, w.claimUpsert, w.claimDelete)
}

// readerStmts are the read statements, prepared on the writer connection
// and, for a shared store, on the reader pool (database/sql prepares each
// on a pool connection the first time it runs there).
type readerStmts struct {
	runGet        *sql.Stmt
	listDue       *sql.Stmt
	nextDue       *sql.Stmt
	ledgerList    *sql.Stmt
	ledgerCount   *sql.Stmt
	findCompleted *sql.Stmt
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
	// CROSS JOIN makes SQLite drive the loop from wait_index's
	// next_due_iso index; left to itself it may scan every waiting run.
	p(&r.listDue, `SELECT w.run_id, w.next_due_iso FROM wait_index w CROSS JOIN runs r ON r.run_id = w.run_id
		WHERE w.next_due_iso <= ? AND r.status = 'waiting'
		ORDER BY w.next_due_iso ASC, w.run_id ASC LIMIT ?`)
	p(&r.nextDue, `SELECT w.next_due_iso FROM wait_index w CROSS JOIN runs r ON r.run_id = w.run_id
		WHERE r.status = 'waiting' ORDER BY w.next_due_iso ASC LIMIT 1`)
	p(&r.ledgerList, `SELECT seq, record_json FROM ledger WHERE run_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?`)
	p(&r.ledgerCount, `SELECT COALESCE(MAX(seq), 0) FROM ledger WHERE run_id = ?`)
	p(&r.findCompleted, `SELECT seq, record_json FROM ledger WHERE run_id = ? AND completed_key = ?
		ORDER BY seq ASC LIMIT 1`)
	p(&r.cmdListAfter, `SELECT seq, command_id, run_id, type, payload_json, ts, client_id
		FROM commands WHERE seq > ? ORDER BY seq ASC LIMIT ?`)
	p(&r.cmdLastSeq, `SELECT COALESCE(MAX(seq), 0) FROM commands`)
	p(&r.cursorLoad, `SELECT cursor FROM command_cursors WHERE consumer_id = ?`)
	return err
}

func (r *readerStmts) close() error {
	return closeStmts(r.runGet, r.listDue, r.nextDue, r.ledgerList, r.ledgerCount, r.findCompleted,
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
