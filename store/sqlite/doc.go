// Package sqlite is the embedded SQLite Store, on the pure-Go driver
// modernc.org/sqlite (no cgo, static binaries).
//
// # Compatibility with the Python runtime
//
// The database has the schema of the Python runtime's SqliteDatabase
// (runs, wait_index, ledger, ledger_heads, commands, command_cursors;
// migrations/001_python_schema.up.sql), so a database written by Python
// opens and works, and the Python columns are kept filled the way Python
// fills them: run_json in Python's json.dumps layout, record_json without
// seq, wait_until only for WAIT_UNTIL waits. Later migrations add what the
// Go store needs (runs.version, runs.wait_key, ledger.completed_key,
// run_claims); schema.sql is the resulting schema. Migrations are
// embedded, numbered and recorded in schema_migrations; they run when the
// store opens.
//
// # Pages per commit
//
// In WAL mode a commit costs roughly one page write per b-tree it
// touches, so migration 004 trims what every commit maintains: ledger
// seqs come from the primary key instead of ledger_heads (Python
// back-fills ledger_heads from MAX(seq) when it opens a database), the
// index duplicating the ledger's primary key and two runs indexes no
// query of this store uses are dropped, and the parent index only holds
// child runs. A 10-node chain run (start + completion) went from 18.4 to
// 10.3 WAL frames. Python recreates its dropped indexes when it opens the
// database, which is harmless.
//
// # Connections
//
// SQLite allows one writer at a time, so the store keeps one writer
// connection, serialises writes in process, and prepares the hot
// statements on it once; reads go to a small pool of reader connections,
// which WAL lets run beside the writer. Every connection uses
// journal_mode=WAL, foreign_keys=ON and busy_timeout=5000;
// synchronous is NORMAL unless Config.Synchronous says otherwise.
//
// # Time
//
// Timestamps are stored as text in the one UTC form durable.FormatTime
// writes (Python's isoformat(): 2026-11-29T23:12:07.099499+00:00, the
// fraction left out when zero). Text order is then time order (a missing
// fraction sorts before any fraction because '+' < '.'), so the due index
// compares wait_index.next_due_iso with the query time formatted the same
// way, and lists ordered by updated_at order by time. The first open of a
// database written by Python rebuilds wait_index in that form (migration
// 003), adding the WAIT_EVENT timeouts Python does not index.
//
// # Cancellation
//
// A context ends a wait for the writer or a read in progress; once a write
// transaction has begun it runs to its end (a few statements), so that
// writes are never left half-done by a cancelled caller.
package sqlite
