// Package postgres is the PostgreSQL Store, on pgx v5 and a pgxpool.Pool,
// for deployments that outgrow one machine: several runner processes, on
// several machines, share one database (and schema).
//
// # Schema
//
// The tables mirror the SQLite store's (runs, ledger, commands,
// command_cursors, run_claims), in PostgreSQL types: times are timestamptz
// and compare as instants; run_json, record_json and payload_json are
// text in Python's json.dumps layout (durable.MarshalRun and MarshalRecord
// with pyjson.Line), byte-identical to what the other stores write, so a
// run can be copied between stores. Identifier columns use the "C"
// collation so that ORDER BY run_id is byte order, as in SQLite. The
// due-wait index is the runs.due_at column (set for a waiting run with a
// deadline) with a partial index; vars._run_lifecycle is kept in a column
// of its own so RunIndex never decodes run_json. Config.Schema (default
// "public") holds the tables and is created when missing.
//
// Migrations are embedded (migrations/NNN_name.up.sql), recorded in
// schema_migrations and applied when a Store opens, in one transaction
// under a transaction-level advisory lock, so processes opening the same
// schema at once apply each exactly once. schema.sql is the resulting
// schema.
//
// # Concurrency between processes
//
// Everything a process may race on is decided by the database:
//
//   - RunCommit is one transaction. Its UPDATE … WHERE run_id = $1 AND
//     version = $2 locks the run row, so of two commits of one version
//     exactly one changes a row; the other, after waiting, changes none
//     and gets store.ErrConflict (store.ErrNotFound when the run is gone).
//     A create is an INSERT … ON CONFLICT DO NOTHING (store.ErrAlreadyExists).
//     The statements go in one pipelined batch, one round trip, which the
//     server runs as one implicit transaction; a run statement that writes
//     no row fails on purpose (division by zero), so the records queued
//     after it are never applied.
//   - Ledger seqs are MAX(seq)+1 taken under a per-run advisory lock held
//     to commit, by RunCommit and LedgerAppend alike, so they are gapless
//     and an append's records are contiguous.
//   - Command seqs come from the one-row command_seq table, locked by
//     each append: gapless, never reused after a delete, and committed in
//     seq order, so a consumer reading after its cursor never skips a
//     command that committed late.
//   - RunClaim is one upsert that only overwrites an expired claim or one
//     the same owner holds. Expiry is judged by the server's clock unless
//     the caller passes a Now (a test clock), so runners' clocks may drift.
package postgres
