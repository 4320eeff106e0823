package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Keys and ids may hold a NUL byte (JSON "\u0000": a wait key a workflow
// builds, a session id an API caller gives), which PostgreSQL refuses in
// text (SQLSTATE 22021). The memory, SQLite and JSON stores keep these
// values, so the store must escape them in its key columns and hand them
// back exactly. The bug this guards against: the commit putting a run into
// such a wait failed at every tick, and such a command could not be
// appended.
func TestNULInKeysAndIDs(t *testing.T) {
	testURL(t)
	t.Parallel()
	s := openSchema(t, testSchema(t))
	ctx := t.Context()
	const (
		runID   = "run\x00\x01id"
		parent  = "parent\x00"
		waitKey = "answer\x00x"
		session = "session\x00a"
		actor   = "\x01actor"
		ikey    = "key\x00"
	)
	r := testRun(runID)
	r.ParentRunID, r.ActorID, r.SessionID = parent, actor, session
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	rec := testRecord(runID, "ask")
	rec.IdempotencyKey = ikey
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitEvent, WaitKey: waitKey, ResumeToNode: "next",
		Until: durable.NewTime(t0.Add(time.Minute))}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatalf("commit of a run waiting on key %q: %v", r.Waiting.WaitKey, err)
	}
	if got, err := s.RunGet(ctx, runID); err != nil || got.Waiting.WaitKey != waitKey || got.SessionID != session {
		t.Fatalf("RunGet = %+v, %v", got, err)
	}
	for name, p := range map[string]*store.RunListParams{
		"wait key": {WaitKeys: []string{waitKey}}, "session": {SessionID: session}, "parent": {ParentID: parent},
	} {
		if got, err := s.RunList(ctx, p); err != nil || len(got) != 1 || got[0].RunID != runID {
			t.Errorf("RunList by %s = %d runs, %v; want the waiting run", name, len(got), err)
		}
	}
	if got, err := s.RunList(ctx, &store.RunListParams{SessionID: "session"}); err != nil || len(got) != 0 {
		t.Errorf("RunList by a prefix of the session = %d runs, %v; want none", len(got), err)
	}
	if kids, err := s.RunListChildren(ctx, parent, ""); err != nil || len(kids) != 1 {
		t.Errorf("RunListChildren = %d, %v", len(kids), err)
	}
	if due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: t0.Add(time.Hour)}); err != nil || len(due) != 1 || due[0].RunID != runID {
		t.Errorf("RunListDue = %+v, %v; want %q", due, err, runID)
	}
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{SessionID: session})
	if err != nil || len(rows) != 1 {
		t.Fatalf("RunIndex = %d rows, %v", len(rows), err)
	}
	if row := rows[0]; row.RunID != runID || row.ParentRunID != parent || row.ActorID != actor || row.SessionID != session {
		t.Errorf("RunIndex row = %q %q %q %q", row.RunID, row.ParentRunID, row.ActorID, row.SessionID)
	}
	if got, err := s.LedgerFindCompleted(ctx, runID, ikey); err != nil || got == nil {
		t.Errorf("LedgerFindCompleted(%q) = %v, %v", ikey, got, err)
	}

	if err := s.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: "owner\x00a", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var held *store.ClaimHeldError
	err = s.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: "owner\x00b", TTL: time.Minute})
	if !errors.As(err, &held) || held.Owner != "owner\x00a" {
		t.Errorf("a second claim = %v; want a ClaimHeldError naming %q", err, "owner\x00a")
	}

	c := &durable.CommandRecord{CommandID: "cmd\x00", RunID: runID, Type: "resume", ClientID: "client\x00b",
		Payload: map[string]any{"wait_key": waitKey}}
	if _, err := s.CommandAppend(ctx, c); err != nil {
		t.Fatalf("CommandAppend with NULs in its ids: %v", err)
	}
	cmds, _, err := s.CommandListAfter(ctx, 0, 10)
	if err != nil || len(cmds) != 1 || cmds[0].CommandID != c.CommandID || cmds[0].RunID != runID || cmds[0].ClientID != c.ClientID {
		t.Fatalf("CommandListAfter = %+v, %v", cmds, err)
	}
	if err := s.CursorSave(ctx, "consumer\x00", 1); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CursorLoad(ctx, "consumer\x00"); err != nil || n != 1 {
		t.Errorf("CursorLoad = %d, %v", n, err)
	}
}
