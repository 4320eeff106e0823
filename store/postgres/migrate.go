package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

//go:embed migrations/*.up.sql
var migrationFS embed.FS

// migration is one numbered step: its up script, then its Go part if
// any.
type migration struct {
	version int
	name    string
	sql     string
	goFunc  func(ctx context.Context, tx pgx.Tx) error
}

// goMigrations are the data migrations done in Go, by version: those
// whose rules live in Go (store.Deadline), run after the version's script.
var goMigrations = map[int]func(ctx context.Context, tx pgx.Tx) error{
	4: restoreDueAt,
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".up.sql")
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: want NNN_name.up.sql", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b), goFunc: goMigrations[v]})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d", m.name, m.version, i+1)
		}
	}
	return out, nil
}

// schemaMigrationsSQL creates the table recording the applied migrations.
const schemaMigrationsSQL = `CREATE TABLE schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
`

// migrate creates the schema when missing and applies the migrations not
// yet recorded in schema_migrations, all in one transaction under an
// advisory lock, so that processes opening the same schema at once apply
// each migration exactly once. A schema that is up to date needs no
// CREATE privilege.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var applied []string
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := advisoryLock(ctx, tx, s.lockOn("migrate", "")); err != nil {
			return err
		}
		var hasSchema, hasTable bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
			to_regclass(quote_ident($1) || '.schema_migrations') IS NOT NULL`, s.schema).Scan(&hasSchema, &hasTable); err != nil {
			return fmt.Errorf("inspecting schema: %w", err)
		}
		if !hasSchema {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{s.schema}.Sanitize()); err != nil {
				return fmt.Errorf("creating schema: %w", err)
			}
		}
		if !hasTable {
			if _, err := tx.Exec(ctx, schemaMigrationsSQL); err != nil {
				return fmt.Errorf("creating schema_migrations: %w", err)
			}
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("reading schema_migrations: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("schema is at version %d, newer than this binary's %d", current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("applying %s: %w", m.name, err)
			}
			if m.goFunc != nil {
				if err := m.goFunc(ctx, tx); err != nil {
					return fmt.Errorf("applying %s: %w", m.name, err)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`,
				m.version, m.name); err != nil {
				return fmt.Errorf("recording %s: %w", m.name, err)
			}
			applied = append(applied, m.name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(applied) > 0 {
		s.log.InfoContext(ctx, "migrations applied", "migrations", applied)
	}
	return nil
}

// restoreDueAt (migration 004) sets due_at again on the waiting runs
// whose deadline store.Deadline indexes but that have none: those
// migration 002 judged paused when control.paused was not the boolean
// true (the string "true"). Only runs that could be such are read
// (waiting on a deadline, without due_at); rows that do not decode keep
// theirs, as their reads skip them. A run is updated only at the version
// read: a runner of the previous version may commit it meanwhile (a
// rolling upgrade), and an UPDATE by run_id alone would wait for its row
// lock and then set due_at on the row that runner committed (a run
// completed meanwhile would be listed due for ever); its commit set the
// due_at it judged right.
func restoreDueAt(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT run_id, run_json, version FROM runs WHERE status = 'waiting'
		AND wait_reason IN ('until', 'event') AND wait_until IS NOT NULL AND due_at IS NULL`)
	if err != nil {
		return fmt.Errorf("reading the runs waiting without due_at: %w", err)
	}
	type due struct {
		runID   string
		at      time.Time
		version int64
	}
	var fix []due
	for rows.Next() {
		var runID string
		var text []byte
		var version int64
		if err := rows.Scan(&runID, &text, &version); err != nil {
			rows.Close()
			return err
		}
		r, err := durable.UnmarshalRun(text)
		if err != nil {
			continue
		}
		if until, ok := store.Deadline(r); ok {
			fix = append(fix, due{runID, until.Time, version})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the runs waiting without due_at: %w", err)
	}
	for _, d := range fix {
		// run_id as the column holds it: the run's JSON spells it as read.
		if _, err := tx.Exec(ctx, `UPDATE runs SET due_at = $2 WHERE run_id = $1 AND version = $3`,
			d.runID, d.at, d.version); err != nil {
			return fmt.Errorf("setting due_at of run %q: %w", d.runID, err)
		}
	}
	return nil
}

// schemaHeader opens schema.sql.
const schemaHeader = `-- Schema of store/postgres after every migration (generated by TestSchemaFile -update;
-- do not edit): schema_migrations, then migrations/*.up.sql in order.
`

// schemaSQL returns the text of schema.sql: the whole schema after every
// migration, created in the connection's search_path.
func schemaSQL() (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", fmt.Errorf("postgres: reading migrations: %w", err)
	}
	var b strings.Builder
	b.WriteString(schemaHeader + "\n" + schemaMigrationsSQL)
	for _, m := range ms {
		fmt.Fprintf(&b, "\n-- %s\n\n%s", m.name, m.sql)
	}
	return b.String(), nil
}
