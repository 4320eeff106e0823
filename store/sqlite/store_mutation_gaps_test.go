package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Tests added by a second round of mutation testing of store/sqlite
// (runs, ledger, commands, claims, lists, migrations, cache): each guards
// a promise of a doc comment or the package doc that no other test
// checked.

// CommandAppend writes the seq of an accepted command back to c (its doc:
// the id and TS it fills are "written back to c, with the seq"); a
// duplicate leaves c's seq alone.
func TestCommandAppendWritesSeqBackToAcceptedCommand(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := mutOpen(t, Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
	for i, id := range []string{"c1", "c2"} {
		c := &durable.CommandRecord{CommandID: id, RunID: "run-1", Type: "pause"}
		res, err := s.CommandAppend(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Accepted || res.Seq != int64(i+1) || c.Seq != res.Seq {
			t.Errorf("CommandAppend(%s) = %+v, c.Seq = %d; want accepted at seq %d, written back to c", id, res, c.Seq, i+1)
		}
	}
	anon := &durable.CommandRecord{RunID: "run-1", Type: "resume"}
	if res, err := s.CommandAppend(ctx, anon); err != nil || anon.Seq != 3 || res.Seq != 3 {
		t.Errorf("CommandAppend(anonymous) = %+v, %v; c.Seq = %d, want 3", res, err, anon.Seq)
	}
	dup := &durable.CommandRecord{CommandID: "c1", RunID: "run-1", Type: "pause"}
	if res, err := s.CommandAppend(ctx, dup); err != nil || !res.Duplicate || res.Seq != 1 || dup.Seq != 0 {
		t.Errorf("duplicate CommandAppend = %+v, %v; c.Seq = %d, want a duplicate of seq 1 leaving c.Seq 0", res, err, dup.Seq)
	}
}

// A refused renewal is an ErrConflict, and not a store.ClaimHeldError
// naming nobody: a ClaimHeldError names the owner holding the run, and a
// renewal of a claim nobody holds any more has none.
func TestRunClaimRefusedRenewalNamesNoFalseHolder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for name, cfg := range map[string]Config{"owned": {}, "shared": {Shared: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := mutOpen(t, cfg)
			now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			claim := func(p store.RunClaimParams) error {
				p.RunID, p.TTL, p.Now = "run-1", 10*time.Second, now
				return s.RunClaim(ctx, &p)
			}
			var held *store.ClaimHeldError
			err := claim(store.RunClaimParams{Owner: "a", Renew: true})
			if !errors.Is(err, store.ErrConflict) || errors.As(err, &held) {
				t.Errorf("renewal of a claim nobody holds: err = %v, want an ErrConflict that is no ClaimHeldError", err)
			}
			if err := claim(store.RunClaimParams{Owner: "b"}); err != nil {
				t.Fatal(err)
			}
			err = claim(store.RunClaimParams{Owner: "a", Renew: true})
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("renewal by a of b's claim: err = %v, want ErrConflict", err)
			}
			if errors.As(err, &held) && held.Owner != "b" {
				t.Errorf("renewal by a of b's claim: ClaimHeldError names %q, want b", held.Owner)
			}
		})
	}
}

// New back-fills ledger_heads: it raises every head to the highest seq of
// its run (backfillLedgerHeads), as Python does when it opens a database.
// A store owning its file appends without keeping the heads, so a head a
// shared store (or Python) left behind must be raised at the next open,
// or a Python process allocating from it would reuse a seq the ledger
// holds.
func TestOpenRaisesLedgerHeadsLeftBehind(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: step, Status: durable.StepCompleted}
	}
	shared := mutOpen(t, Config{Path: path, Shared: true})
	if err := shared.RunCommit(ctx, &store.CommitParams{Run: redoRun("r1"), Create: true,
		Records: []*durable.StepRecord{rec("s1"), rec("s2")}}); err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	owned := mutOpen(t, Config{Path: path})
	if err := owned.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec("s3"), rec("s4")}); err != nil {
		t.Fatal(err)
	}
	if err := owned.Close(); err != nil {
		t.Fatal(err)
	}
	head := func() int64 {
		t.Helper()
		db := mutRawDB(t, path)
		defer db.Close()
		var n int64
		if err := db.QueryRow(`SELECT COALESCE((SELECT last_seq FROM ledger_heads WHERE run_id = 'r1'), 0)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := head(); n != 2 {
		t.Logf("ledger_heads.last_seq before the reopen = %d (the owning store kept it, or did not)", n)
	}
	reopened := mutOpen(t, Config{Path: path})
	if err := reopened.Close(); err != nil {
		t.Fatal(err)
	}
	if n := head(); n != 4 {
		t.Errorf("ledger_heads.last_seq after a reopen = %d, want 4 (the highest seq of the run)", n)
	}
}

// Writes on a closed store return errClosed ("sqlite: store is closed"),
// whatever path they take, and so does a read of a store owning its file
// (takeTurn): not an error of the connection Close closed under them.
func TestWritesOnAClosedStoreReturnErrClosed(t *testing.T) {
	t.Parallel()
	modes := map[string]Config{"owned": {}, "owned without redo log": {NoRedoLog: true},
		"no cache": {CacheBytes: -1}, "shared": {Shared: true}}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := mutOpen(t, cfg)
			r := redoRun("r1")
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, errClosed) {
					t.Errorf("%s on a closed store: err = %v, want errClosed", what, err)
				}
			}
			check("RunCommit", s.RunCommit(ctx, &store.CommitParams{Run: r}))
			check("RunCommit (create)", s.RunCommit(ctx, &store.CommitParams{Run: redoRun("r2"), Create: true}))
			_, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "r1", Type: "pause"})
			check("CommandAppend", err)
			_, err = s.LedgerDelete(ctx, "r1")
			check("LedgerDelete", err)
			check("CursorSave", s.CursorSave(ctx, "c", 1))
			check("RunClaim", s.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "a", TTL: time.Second}))
			if !cfg.Shared {
				_, err = s.RunList(ctx, &store.RunListParams{})
				check("RunList", err)
				_, _, err = s.CommandListAfter(ctx, 0, 0)
				check("CommandListAfter", err)
			}
		})
	}
}

// cancelledOnceTurnTaken is a context that ends right after its first
// Done call, which is the wait for the writer turn (takeTurn) in a store
// without a redo log: its caller gives up once its write has the turn.
type cancelledOnceTurnTaken struct {
	context.Context
	calls atomic.Int32
}

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *cancelledOnceTurnTaken) Done() <-chan struct{} {
	if c.calls.Add(1) == 1 {
		return nil
	}
	return closedDone
}

func (c *cancelledOnceTurnTaken) Err() error {
	if c.calls.Load() > 1 {
		return context.Canceled
	}
	return nil
}

// A context ends the wait for the writer, but once a write transaction
// has begun it runs to its end (package doc, "Cancellation"; Store.write):
// a caller cancelling while its write holds the writer turn gets the write
// committed, whole, not an interrupted transaction.
func TestWriteCancelledAfterTakingTheTurnStillCommits(t *testing.T) {
	t.Parallel()
	modes := map[string]Config{"owned without redo log": {NoRedoLog: true}, "no cache": {CacheBytes: -1},
		"shared": {Shared: true}}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := mutOpen(t, cfg)
			rec := func(step string) *durable.StepRecord {
				return &durable.StepRecord{RunID: "r1", StepID: step, Status: durable.StepCompleted}
			}
			r := redoRun("r1")
			ctx := &cancelledOnceTurnTaken{Context: t.Context()}
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true,
				Records: []*durable.StepRecord{rec("s1"), rec("s2")}}); err != nil {
				t.Fatalf("RunCommit cancelled once it had the writer turn: %v", err)
			}
			ctx = &cancelledOnceTurnTaken{Context: t.Context()}
			if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec("s3")}); err != nil {
				t.Fatalf("LedgerAppend cancelled once it had the writer turn: %v", err)
			}
			ctx = &cancelledOnceTurnTaken{Context: t.Context()}
			if _, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "r1", Type: "pause"}); err != nil {
				t.Fatalf("CommandAppend cancelled once it had the writer turn: %v", err)
			}
			got, err := s.RunGet(t.Context(), "r1")
			if err != nil || got.Version != 1 {
				t.Fatalf("RunGet = %+v, %v; want the run at version 1", got, err)
			}
			if n, err := s.LedgerCount(t.Context(), "r1"); err != nil || n != 3 {
				t.Errorf("LedgerCount = %d, %v; want 3", n, err)
			}
			if n, err := s.CommandLastSeq(t.Context()); err != nil || n != 1 {
				t.Errorf("CommandLastSeq = %d, %v; want 1", n, err)
			}
		})
	}
}

// Lists skip a row whose run_json cannot be decoded (queryRuns: "skipping
// unreadable ones"), as RunGet counts it absent: one bad row does not
// make every list of runs fail.
func TestListsSkipUnreadableRunJSON(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path})
	for _, id := range []string{"r1", "r2", "r3"} {
		r := redoRun(id)
		r.ParentRunID = "p"
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET run_json = 'not json' WHERE run_id = 'r2'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = mutOpen(t, Config{Path: path})
	ids := func(runs []*durable.RunState) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.RunID)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"r1", "r3"}
	for name, p := range map[string]*store.RunListParams{
		"unfiltered": {}, "by status": {Status: durable.RunRunning}, "by workflow": {WorkflowID: "wf"},
		"by parent": {ParentID: "p"},
	} {
		got, err := s.RunList(ctx, p)
		if err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("RunList(%s) = %v, %v; want %v, the unreadable run skipped", name, ids(got), err, want)
		}
	}
	got, err := s.RunListChildren(ctx, "p", "")
	if err != nil || !slices.Equal(ids(got), want) {
		t.Errorf("RunListChildren = %v, %v; want %v, the unreadable run skipped", ids(got), err, want)
	}
}

// pyUpsertRun is Python's SqliteRunStore.save statement (0.4.28).
const pyUpsertRun = `INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until,
  parent_run_id, actor_id, session_id, created_at, updated_at, run_json)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(run_id) DO UPDATE SET workflow_id=excluded.workflow_id, status=excluded.status,
  wait_reason=excluded.wait_reason, wait_until=excluded.wait_until, parent_run_id=excluded.parent_run_id,
  actor_id=excluded.actor_id, session_id=excluded.session_id, updated_at=excluded.updated_at,
  run_json=excluded.run_json`

// A shared store's RunList by wait key indexes the rows Python wrote
// since the store opened first (indexPythonWrites): a run Python saved
// waiting on an event, with a NaN in its vars (json.dumps writes NaN,
// which the triggers' json_valid refuses), is found by its key by the
// very first lookup, not only after some other lookup or a reopen.
func TestSharedRunListByWaitKeyFindsPythonNaNRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path, Shared: true})
	const at = "2026-12-01T04:51:14.026251+00:00"
	runJSON := `{"run_id": "py1", "workflow_id": "wf", "status": "waiting", "current_node": "n", "vars": {"score": NaN}, ` +
		`"waiting": {"reason": "event", "wait_key": "evt:k", "until": null, "resume_to_node": "done", "result_key": "evt"}, ` +
		`"output": null, "error": null, "created_at": "` + at + `", "updated_at": "` + at + `", ` +
		`"actor_id": null, "session_id": null, "parent_run_id": null}`
	db := mutRawDB(t, path)
	if _, err := db.Exec(pyUpsertRun, "py1", "wf", "waiting", "event", nil, nil, nil, nil, at, at, runJSON); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{WaitKeys: []string{"evt:k"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RunID != "py1" {
		t.Errorf("RunList by wait key = %d runs; want the run py1 Python saved waiting on evt:k", len(got))
	}
}

// A command whose payload_json is null, not an object or not JSON (a hand
// edit) reads with the payload {}, as Python's reader has it, instead of
// failing every listing of its page.
func TestCommandWithBadPayloadReadsAsEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.sqlite3")
	st := mutOpen(t, Config{Path: path, Shared: true})
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := st.CommandAppend(ctx, &durable.CommandRecord{CommandID: id, RunID: "r", Type: "pause", Payload: map[string]any{"k": id}}); err != nil {
			t.Fatal(err)
		}
	}
	db := mutRawDB(t, path)
	defer db.Close()
	for id, bad := range map[string]string{"a": "null", "b": "[1, 2]", "c": "{torn"} {
		if _, err := db.ExecContext(ctx, `UPDATE commands SET payload_json = ? WHERE command_id = ?`, bad, id); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := st.CommandListAfter(ctx, 0, 10)
	if err != nil {
		t.Fatalf("listing commands with bad payloads: %v", err)
	}
	if len(got) != 4 {
		t.Fatalf("listed %d commands, want 4", len(got))
	}
	for _, c := range got {
		want := 0
		if c.CommandID == "d" {
			want = 1
		}
		if c.Payload == nil || len(c.Payload) != want {
			t.Errorf("command %s payload = %v", c.CommandID, c.Payload)
		}
	}
}
