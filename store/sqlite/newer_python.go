package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// newerPythonRunColumns are the runs columns a newer Python runtime
// (lpalbou/AbstractRuntime storage/sqlite.py after 0.4.28) adds when it
// opens a database and fills from run_json at each of its saves: paused
// and run_lifecycle_json (its backlog 0068: the external-control probe and
// the run index read them instead of parsing run_json) and the automation
// attribution columns. In that module SQL NULL in paused, and in
// session_kind for the attribution, means "not yet back-filled": its
// readers then fall back to run_json (probe_control returns None and the
// runtime loads the run; the run index derives the fields from the
// document) and every open of the database fills such rows again.
var newerPythonRunColumns = []string{"paused", "run_lifecycle_json", "automation_id", "role", "occurrence_index", "session_kind"}

// newerPythonTrigger names the trigger installed by
// syncNewerPythonTrigger.
const newerPythonTrigger = "runs_python_derived_columns_stale"

// syncNewerPythonTrigger keeps a database written by a newer Python
// runtime consistent for it. Our commits write run_json without those
// columns, so they would keep describing the state before the commit: a
// pause we lift would stay paused = 1, and that Python's control probe,
// which reads only status and paused, would hold the run paused forever.
// When the columns exist, a trigger sets them back to NULL (not yet
// back-filled) whenever our commit changes run_json: our updates move
// runs.version on, the Python upsert never sets it (migration 017's
// trigger moves it afterwards, in an update of version alone), so the
// Python save keeps the values it has just written. Our inserts leave the
// columns NULL already. The trigger is installed (or replaced, when
// Python has added columns since) only when such columns exist, so that a
// database without them (ours, or 0.4.28's) is left as it is. It runs in
// the migration transaction (tx) and, in a shared store, whose schema a
// newer Python may change while we are open, in the first write
// transaction after PRAGMA schema_version moved (sharedTx).
func syncNewerPythonTrigger(ctx context.Context, tx dbtx) error {
	var present []string
	for _, c := range newerPythonRunColumns {
		has, err := hasColumn(ctx, tx, "runs", c)
		if err != nil {
			return err
		}
		if has {
			present = append(present, c)
		}
	}
	if len(present) == 0 {
		return nil
	}
	sets := make([]string, len(present))
	filled := make([]string, len(present))
	for i, c := range present {
		sets[i] = c + " = NULL"
		filled[i] = "NEW." + c + " IS NOT NULL"
	}
	// Rows already NULL (every commit of ours after the first) are not
	// written again.
	want := "CREATE TRIGGER " + newerPythonTrigger +
		" AFTER UPDATE OF run_json ON runs WHEN NEW.version IS NOT OLD.version AND (" + strings.Join(filled, " OR ") + ")" +
		" BEGIN UPDATE runs SET " + strings.Join(sets, ", ") + " WHERE run_id = NEW.run_id; END"
	var have string
	err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`,
		newerPythonTrigger).Scan(&have)
	switch {
	case err == nil && have == want:
		return nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("reading trigger %s: %w", newerPythonTrigger, err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+newerPythonTrigger); err != nil {
		return fmt.Errorf("dropping trigger %s: %w", newerPythonTrigger, err)
	}
	if _, err := tx.ExecContext(ctx, want); err != nil {
		return fmt.Errorf("creating trigger %s for the newer Python runtime's columns %s: %w",
			newerPythonTrigger, strings.Join(present, ", "), err)
	}
	return nil
}
