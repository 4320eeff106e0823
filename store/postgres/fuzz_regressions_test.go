package postgres_test

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/testlog"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// pfOpenLogged opens a Store on a fresh schema whose warnings go to logs.
func pfOpenLogged(t *testing.T, logs *testlog.Recorder) (*postgres.Store, string) {
	t.Helper()
	schema := testSchema(t)
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
		Logger: logs.Logger(), MaxConns: 2})
	if err != nil {
		t.Fatalf("New(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, schema
}

// TestListSkipWarningNamesRun (found by FuzzPostgresForeignRows): a
// list (RunList, RunListChildren) skipping a row whose run_json does not
// decode logged "skipping unreadable run_json" with the decode error alone
// ("invalid JSON at offset 0"), so nothing said which run was skipped;
// RunGet's warning and the ledger's name it, and the SQLite store's list
// warning names it (store/sqlite TestListSkipWarningNamesRun).
func TestListSkipWarningNamesRun(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	logs := &testlog.Recorder{}
	st, schema := pfOpenLogged(t, logs)
	r := &durable.RunState{RunID: "unreadable-1", WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: "p"}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	conn := plainConn(t)
	if _, err := conn.Exec(ctx, `UPDATE `+pgx.Identifier{schema, "runs"}.Sanitize()+
		` SET run_json = 'not json' WHERE run_id = 'unreadable-1'`); err != nil {
		t.Fatal(err)
	}
	storetest.CheckListsSkipUnreadable(ctx, t, st, logs, "unreadable-1", "p")
}

// TestFindCompletedChecksTheRecord (found by FuzzPostgresForeignRows):
// LedgerFindCompleted returned the first decodable row the completed_key
// index lists under the key, without checking that the record is a
// completed record of that key. A row whose completed_key column disagrees
// with its record_json (a hand edit, a copy tool, a repair) was then
// answered as the completion of an effect: a failed step's record, or
// another key's result, replayed as if that effect had completed. The
// memory store matches on the record itself, and so does the SQLite
// store's scan ("should the index and the document ever disagree").
func TestFindCompletedChecksTheRecord(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	logs := &testlog.Recorder{}
	st, schema := pfOpenLogged(t, logs)
	const run = "find-disagree"
	recs := []*durable.StepRecord{
		{RunID: run, StepID: "s1", NodeID: "n", Status: durable.StepFailed, IdempotencyKey: "k", Attempt: 1},
		{RunID: run, StepID: "s2", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "other", Attempt: 1},
		{RunID: run, StepID: "s3", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k", Attempt: 1},
	}
	if err := st.LedgerAppend(ctx, run, recs); err != nil {
		t.Fatal(err)
	}
	conn := plainConn(t)
	// Rows 1 (failed) and 2 (completed, another key) listed under "k".
	if _, err := conn.Exec(ctx, `UPDATE `+pgx.Identifier{schema, "ledger"}.Sanitize()+
		` SET completed_key = 'k' WHERE run_id = $1 AND seq IN (1, 2)`, run); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, run, "k")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted(k) = %+v, %v; want the completed record at seq 3", got, err)
	}
	if got.Seq != 3 || got.Status != durable.StepCompleted || got.IdempotencyKey != "k" {
		t.Fatalf("LedgerFindCompleted(k) = seq %d, status %q, key %q; want seq 3, a completed record of k",
			got.Seq, got.Status, got.IdempotencyKey)
	}
}

// TestCommandAppendAfterRowsCopiedWithTheirSeqs (found while writing
// the foreign-seq mode of FuzzPostgresForeignCommands, whose seeds hit
// it): command_seq is kept "like
// SQLite's AUTOINCREMENT counter" (schema.sql), but SQLite's counter
// follows an explicit seq a writer inserts, and command_seq did not. Rows
// another writer inserted with seqs of their own (commands copied from a
// SQLite store with their seqs, so that consumers' cursors stay right; a
// hand repair) left last_seq behind them, and every later CommandAppend
// failed on the primary key ("duplicate key value violates unique
// constraint commands_pkey"): the whole inbox refused every command (a
// pause, a cancel) until someone repaired the counter by hand. An append
// now takes the seq after the larger of the counter and the largest seq
// stored, as SQLite's AUTOINCREMENT does, and never one below a stored
// command (which a consumer past it would never read).
func TestCommandAppendAfterRowsCopiedWithTheirSeqs(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := testSchema(t)
	s := openSchema(t, schema)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	// Rows copied in with their own seqs, 2 and 5; command_seq untouched.
	for seq, id := range map[int64]string{2: "copied-2", 5: "copied-5"} {
		if _, err := plainConn(t).Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "commands"}.Sanitize()+
			` (seq, command_id, run_id, type, payload_json) VALUES ($1, $2, 'r1', 'resume', '{}')`, seq, id); err != nil {
			t.Fatal(err)
		}
	}
	c := &durable.CommandRecord{CommandID: "c-new", RunID: "r1", Type: "cancel"}
	res, err := s.CommandAppend(ctx, c)
	if err != nil {
		t.Fatalf("CommandAppend after rows copied in with their seqs: %v; want it accepted after them", err)
	}
	if !res.Accepted || res.Seq != 6 {
		t.Fatalf("CommandAppend = %+v; want accepted at seq 6, after every stored command", res)
	}
	got, next, err := s.CommandListAfter(ctx, 0, 10)
	if err != nil || len(got) != 4 || next != 6 || got[3].CommandID != "c-new" {
		t.Fatalf("CommandListAfter = %d commands up to %d, %v; want c1, copied-2, copied-5, c-new up to 6", len(got), next, err)
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "copied-5", RunID: "r1", Type: "resume"}); err != nil || !res.Duplicate || res.Seq != 5 {
		t.Errorf("CommandAppend(copied-5) = %+v, %v; want a duplicate at seq 5", res, err)
	}
}

// TestLongIdempotencyKeyCommits: a completed record whose idempotency key
// is past about 2.7 KB and does not compress could not be written: the
// btree index on (run_id, completed_key, seq) refused the entry (SQLSTATE
// 54000), so every commit carrying the record failed and the run stayed at
// its last checkpoint, where the memory and SQLite stores take the key.
// Migration 006 indexes the key by hash, as 003 did for wait keys.
func TestLongIdempotencyKeyCommits(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	s := openSchema(t, testSchema(t))
	b := make([]byte, 1600)
	_, _ = rand.Read(b)
	key := hex.EncodeToString(b) // 3200 bytes that do not compress
	for name, st := range map[string]store.Store{"memory": memory.New(), "postgres": s} {
		r := testRun("r1")
		rec := testRecord("r1", "n")
		rec.IdempotencyKey = key
		if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
			t.Errorf("%s: commit of a completed record with a %d-byte idempotency key: %.300v", name, len(key), err)
			continue
		}
		if f, ok := st.(store.LedgerFinder); ok {
			if got, err := f.LedgerFindCompleted(ctx, "r1", key); err != nil || got == nil || got.Seq != 1 {
				t.Errorf("%s: LedgerFindCompleted(long key) = %+v, %v; want seq 1", name, got, err)
			}
		}
	}
}
