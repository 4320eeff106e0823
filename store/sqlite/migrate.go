package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

//go:embed migrations/*.up.sql
var migrationFS embed.FS

// migration is one numbered step: its SQL, then its Go part if any.
type migration struct {
	version int
	name    string
	sql     string
	goFunc  goMigration
}

// goMigration is the Go part of a migration. log receives a warning for
// each row it must pass over.
type goMigration func(ctx context.Context, tx dbtx, log *slog.Logger) error

// dbtx is what a migration runs its statements on (the writer connection,
// inside the migration transaction).
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// goMigrations are the data migrations done in Go, by version.
var goMigrations = map[int]goMigration{
	3:  rebuildWaitIndex,
	9:  rebuildWaitIndex,
	19: reindexWronglyPaused,
}

var migrationName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.up\.sql$`)

// loadMigrations returns the embedded migrations in version order.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s: name is not NNN_name.up.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		text, err := fs.ReadFile(migrationFS, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: m[2], sql: string(text), goFunc: goMigrations[v]})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %03d_%s: versions must run 1, 2, 3… without gaps", m.version, m.name)
		}
	}
	return ms, nil
}

// migrate applies the pending migrations in one transaction, recording
// each in schema_migrations. A Python-created database has no
// schema_migrations table: every migration runs, 001 changes nothing and
// the later ones add the Go columns.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	// BEGIN IMMEDIATE: a second process opening the same file waits here
	// (busy_timeout) and then finds the migrations applied.
	tx := s.wconn
	if _, err := tx.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = tx.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`); err != nil {
		return err
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			_ = rows.Close()
			return err
		}
		applied[v] = true
	}
	if err := rows.Close(); err != nil {
		return err
	}
	// A newer binary's migrations may have changed what the tables mean
	// (where deadlines live, say): writing with this binary's idea of
	// them could corrupt the data, so refuse, as the PostgreSQL store
	// does.
	if newest := maxKey(applied); newest > len(ms) {
		return fmt.Errorf("database schema is at version %d, newer than this binary's %d: open it with a newer abstractgateway", newest, len(ms))
	}
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := applyMigration(ctx, tx, m, s.log); err != nil {
			return fmt.Errorf("migration %03d_%s: %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, durable.FormatTime(time.Now())); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "applied migration", "version", m.version, "name", m.name)
	}
	if err := syncNewerPythonTrigger(ctx, tx); err != nil {
		return err
	}
	if s.shared {
		// The schema as synced: sharedTx looks again when it moves.
		if err := tx.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&s.schemaSeen); err != nil {
			return fmt.Errorf("reading the schema version: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	committed = true
	return nil
}

// maxKey returns the largest key of set, 0 when it is empty.
func maxKey(set map[int]bool) int {
	n := 0
	for k := range set {
		n = max(n, k)
	}
	return n
}

var addColumn = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)\b`)

func applyMigration(ctx context.Context, tx dbtx, m migration, log *slog.Logger) error {
	for _, stmt := range splitSQL(m.sql) {
		if a := addColumn.FindStringSubmatch(stmt); a != nil {
			has, err := hasColumn(ctx, tx, a[1], a[2])
			if err != nil {
				return err
			}
			if has {
				continue
			}
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", firstLine(stmt), err)
		}
	}
	if m.goFunc != nil {
		return m.goFunc(ctx, tx, log)
	}
	return nil
}

// splitSQL splits a migration into statements: comment lines are dropped
// and a statement ends with a line ending in ";". Migrations must not put
// ";" at the end of a line inside a string.
func splitSQL(text string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func hasColumn(ctx context.Context, tx dbtx, table, column string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	return n > 0, err
}

// rebuildWaitIndex (migrations 003 and 009) indexes store.Deadline of every waiting
// run, in the normalised time form: Python indexes WAIT_UNTIL runs only
// and keeps their until text as written.
func rebuildWaitIndex(ctx context.Context, tx dbtx, log *slog.Logger) error {
	runs, err := decodedRuns(ctx, tx, log, `SELECT run_id, run_json FROM runs WHERE status = 'waiting'`)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM wait_index`); err != nil {
		return err
	}
	for _, r := range runs {
		until, ok := store.Deadline(r)
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
			VALUES (?, ?, ?, ?)`, r.RunID, until.String(), r.UpdatedAt.String(), waitIndexStatus(r.Waiting.Reason)); err != nil {
			return err
		}
	}
	return nil
}

// reindexWronglyPaused (migration 019) gives back their deadline row to
// the waiting runs that migrations 014, 016 and 018's triggers and
// clean-ups left out of wait_index as paused when control.paused was not
// the boolean true (the number 1, say). Only the runs that could have been
// taken out are read: waiting, without a row, with '"paused": true' in
// their run_json (the triggers' text test); store.Deadline decides.
func reindexWronglyPaused(ctx context.Context, tx dbtx, log *slog.Logger) error {
	runs, err := decodedRuns(ctx, tx, log, `SELECT run_id, run_json FROM runs WHERE status = 'waiting'
		AND (instr(run_json, '"paused": true') > 0 OR instr(run_json, '"paused":true') > 0)
		AND NOT EXISTS (SELECT 1 FROM wait_index w WHERE w.run_id = runs.run_id)`)
	if err != nil {
		return err
	}
	for _, r := range runs {
		until, ok := store.Deadline(r)
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
			VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
			r.RunID, until.String(), r.UpdatedAt.String(), waitIndexStatus(r.Waiting.Reason)); err != nil {
			return fmt.Errorf("indexing the deadline of run %q: %w", r.RunID, err)
		}
	}
	return nil
}

// decodedRuns returns the runs whose run_id and run_json query selects,
// decoded as our reads decode them. A row that does not decode is left
// out with a warning naming its run: reads refuse it too (RunGet names
// it), so it has no deadline to index until it is repaired.
func decodedRuns(ctx context.Context, tx dbtx, log *slog.Logger, query string) ([]*durable.RunState, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	var runs []*durable.RunState
	for rows.Next() {
		var id sql.RawBytes
		var text []byte
		if err := rows.Scan(&id, &text); err != nil {
			_ = rows.Close()
			return nil, err
		}
		r, err := durable.UnmarshalRun(text)
		if err != nil {
			log.WarnContext(ctx, "indexing deadlines: skipping unreadable run_json", "run_id", string(id), "error", err)
			continue
		}
		runs = append(runs, r)
	}
	return runs, rows.Close()
}

// indexPythonRows gives the rows migration 013's triggers listed (Python
// wrote them with NaN or Infinity, which the writer's SQLite could not
// read) their wait_key or completed_key, as 011 did for older rows, and
// their runs' deadline rows, which migrations 014 and 016's triggers (a
// paused run leaves the due index, an event deadline survives Python's
// save) could not work out either.
func (s *Store) indexPythonRows(ctx context.Context) error {
	var listed bool
	if err := s.wconn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM python_unindexed)`).Scan(&listed); err != nil || !listed {
		return err
	}
	if _, err := s.wconn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := s.reindexPythonDeadlines(ctx); err != nil {
		_, _ = s.wconn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	for _, stmt := range []string{
		`UPDATE runs SET wait_key = json_extract(run_json, '$.waiting.wait_key')
		  WHERE run_id IN (SELECT run_id FROM python_unindexed WHERE seq = 0)
		    AND status = 'waiting' AND json_valid(run_json, 2)`,
		`UPDATE ledger SET completed_key = COALESCE(json_extract(record_json, '$.idempotency_key'), '')
		  WHERE (run_id, seq) IN (SELECT run_id, seq FROM python_unindexed WHERE seq > 0)
		    AND completed_key IS NULL AND json_valid(record_json, 2)
		    AND json_extract(record_json, '$.status') = 'completed'`,
		`DELETE FROM python_unindexed`,
	} {
		if _, err := s.wconn.ExecContext(ctx, stmt); err != nil {
			_, _ = s.wconn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return err
		}
	}
	_, err := s.wconn.ExecContext(ctx, "COMMIT")
	if s.keys != nil {
		s.keys.clear() // rows it read without their keys have them now
	}
	return err
}

// reindexPythonDeadlines sets the wait_index rows of the runs
// python_unindexed lists from their state as our decoder reads it (NaN
// included). The caller holds the write transaction.
func (s *Store) reindexPythonDeadlines(ctx context.Context) error {
	runs, err := decodedRuns(ctx, s.wconn, s.log, `SELECT run_id, run_json FROM runs
		WHERE run_id IN (SELECT run_id FROM python_unindexed WHERE seq = 0)`)
	if err != nil {
		return err
	}
	for _, r := range runs {
		var err error
		if until, ok := store.Deadline(r); ok {
			_, err = s.wconn.ExecContext(ctx, `INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
				VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET next_due_iso = excluded.next_due_iso,
				updated_at_iso = excluded.updated_at_iso, status = excluded.status`,
				r.RunID, until.String(), r.UpdatedAt.String(), waitIndexStatus(r.Waiting.Reason))
		} else {
			_, err = s.wconn.ExecContext(ctx, `DELETE FROM wait_index WHERE run_id = ?`, r.RunID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// indexPythonWrites, in a shared store, runs indexPythonRows before a
// lookup by wait key or idempotency key: Python may have written such rows
// since the store opened, and the lookup would miss them until the next
// open. It costs one query on the small python_unindexed table when
// nothing is listed; a store owning its file has nobody else writing.
func (s *Store) indexPythonWrites(ctx context.Context) error {
	if !s.shared {
		return nil
	}
	// Looked at by a read first: the writer turn only when rows are listed.
	rd, err := s.read(ctx)
	if err != nil {
		return err
	}
	listed, err := anyRow(ctx, rd.db, `SELECT 1 FROM python_unindexed LIMIT 1`)
	rd.release()
	if err != nil || !listed {
		return err
	}
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer func() { <-s.wsem }()
	if err := s.indexPythonRows(ctx); err != nil {
		return fmt.Errorf("indexing rows Python wrote: %w", err)
	}
	return nil
}

// anyRow reports whether query returns a row.
func anyRow(ctx context.Context, db querier, query string) (bool, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	return rows.Next(), rows.Err()
}

// backfillLedgerHeads raises every ledger head to the highest seq of its
// run, as Python releases after 0.4.28 do on every open, so that a
// database whose ledger was written without heads keeps allocating
// increasing seqs. Python 0.4.28 does not, so an owning store runs it at
// Close too.
func (s *Store) backfillLedgerHeads(ctx context.Context) error {
	_, err := s.wconn.ExecContext(ctx, `INSERT INTO ledger_heads (run_id, last_seq)
		SELECT run_id, MAX(seq) FROM ledger WHERE true GROUP BY run_id
		ON CONFLICT (run_id) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq)`)
	return err
}
