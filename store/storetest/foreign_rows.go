package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/testlog"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// CompletedRecordLine is a completed ledger record of runID, spelt as
// Python and the stores write it, for a foreign writer to insert.
func CompletedRecordLine(runID, stepID, key string) string {
	return `{"run_id": "` + runID + `", "step_id": "` + stepID + `", "node_id": "n", "status": "completed", "effect": null, "result": {"x": 1}, "error": null, "started_at": "2026-11-29T22:47:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "` + key + `", "prev_hash": null, "record_hash": null, "signature": null}`
}

// ForeignRows checks what a database-backed store reads after another
// writer (Python, a tool, a torn write) damaged its rows. The backend's
// test does the damage in its own SQL; the checks are the same for every
// backend:
//
//  1. Prepare commits Good (running, child of Parent, two hash-chained
//     completed records with keys k1 and k2) and Bad (running, child of
//     Parent), and remembers what was durable.
//  2. The test overwrites Bad's run JSON and inserts, into Good's ledger,
//     a foreign record at seq 3 and CompletedRecordLine(Good, "s4", "k4")
//     at seq 4.
//  3. CheckDamagedRun, CheckLists and CheckGoodRunAndLedger.
//
// Logs must be the store's logger: every skipped row is warned about,
// naming the run (and the seq for a ledger row).
type ForeignRows struct {
	Store             store.Store
	Logs              *testlog.Recorder
	Good, Bad, Parent string

	chained    store.Store
	beforeText []byte
	beforeRecs []*durable.StepRecord
}

// Prepare writes what is durable before the damage.
func (fr *ForeignRows) Prepare(ctx context.Context, t *testing.T) {
	t.Helper()
	fr.chained = hashchain.Wrap(fr.Store)
	good := &durable.RunState{RunID: fr.Good, WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: fr.Parent, Vars: map[string]any{"v": "é"}}
	recs := []*durable.StepRecord{
		{RunID: fr.Good, StepID: "s1", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k1", Attempt: 1},
		{RunID: fr.Good, StepID: "s2", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k2", Attempt: 1, Result: map[string]any{"r": "ok"}},
	}
	if err := fr.chained.RunCommit(ctx, &store.CommitParams{Run: good, Create: true, Records: recs}); err != nil {
		t.Fatalf("commit good: %v", err)
	}
	bad := &durable.RunState{RunID: fr.Bad, WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: fr.Parent}
	if err := fr.Store.RunCommit(ctx, &store.CommitParams{Run: bad, Create: true}); err != nil {
		t.Fatalf("commit bad: %v", err)
	}
	before, err := fr.Store.RunGet(ctx, fr.Good)
	if err != nil {
		t.Fatalf("get good: %v", err)
	}
	fr.beforeText, _ = durable.MarshalRun(before, pyjson.Line)
	fr.beforeRecs, err = fr.Store.LedgerList(ctx, &store.LedgerListParams{RunID: fr.Good})
	if err != nil || len(fr.beforeRecs) != 2 {
		t.Fatalf("list good: %d, %v", len(fr.beforeRecs), err)
	}
}

// CheckDamagedRun checks RunGet of Bad, whose run JSON is now runJSON: it
// succeeds exactly when the text decodes (and gives that run), else fails
// with store.ErrNotFound, an error naming the run and a warning naming it.
// It returns the run read, nil when it does not decode.
func (fr *ForeignRows) CheckDamagedRun(ctx context.Context, t *testing.T, runJSON string) *durable.RunState {
	t.Helper()
	want, wantErr := durable.UnmarshalRunString(runJSON)
	got, err := fr.Store.RunGet(ctx, fr.Bad)
	switch {
	case wantErr == nil && err != nil:
		t.Fatalf("RunGet of a run_json that decodes: %v\n%q", err, runJSON)
	case wantErr != nil && err == nil:
		t.Fatalf("RunGet of a run_json that does not decode (%v) succeeded\n%q", wantErr, runJSON)
	case err != nil && (!errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), fr.Bad)):
		t.Fatalf("RunGet error %q: want store.ErrNotFound naming run %s", err, fr.Bad)
	case err == nil:
		w, _ := durable.MarshalRun(want, pyjson.Line)
		g, _ := durable.MarshalRun(got, pyjson.Line)
		if !bytes.Equal(w, g) {
			t.Fatalf("RunGet of a foreign run_json:\n got %s\nwant %s", g, w)
		}
		return got
	}
	fr.wantWarning(t, "unreadable run_json of "+fr.Bad, "run_id="+fr.Bad)
	return nil
}

// CheckLists checks that RunListChildren and RunList by parent never fail,
// keep Good, list Bad exactly when runJSON decodes to it, and warn naming
// Bad when they skip it.
func (fr *ForeignRows) CheckLists(ctx context.Context, t *testing.T, runJSON string) {
	t.Helper()
	want, wantErr := durable.UnmarshalRunString(runJSON)
	lists := []struct {
		name string
		list func() ([]*durable.RunState, error)
	}{
		{"RunListChildren", func() ([]*durable.RunState, error) { return fr.Store.RunListChildren(ctx, fr.Parent, "") }},
		{"RunList", func() ([]*durable.RunState, error) {
			return fr.Store.RunList(ctx, &store.RunListParams{ParentID: fr.Parent})
		}},
	}
	for _, l := range lists {
		fr.Logs.Take()
		runs, err := l.list()
		if err != nil {
			t.Fatalf("%s with a damaged row: %v", l.name, err)
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.RunID)
		}
		if !slices.Contains(ids, fr.Good) {
			t.Fatalf("%s lost the good run: %v", l.name, ids)
		}
		if wantErr == nil && want.RunID == fr.Bad && !slices.Contains(ids, fr.Bad) {
			t.Fatalf("%s lost a readable foreign run_json: %v\n%q", l.name, ids, runJSON)
		}
		if wantErr != nil {
			if len(ids) != 1 {
				t.Fatalf("%s lists %v; want the unreadable run skipped", l.name, ids)
			}
			fr.wantWarning(t, l.name+" skipped the unreadable run_json of "+fr.Bad, "run_id="+fr.Bad)
		}
	}
	fr.Logs.Take()
}

// CheckGoodRunAndLedger checks, after the damage, that Good and its two
// chained records are read unchanged and still verify; that LedgerList
// lists seqs 1–4, the foreign seq 3 exactly when recordJSON decodes (as
// store.RecordFromRow reads it, with a warning naming run and seq when it
// is skipped), and pages past it; that LedgerFindCompleted finds k2 at seq
// 2 and, for k4, a completed record of k4: seq 4, or seq 3 when
// foreignK4Allowed (the backend may find the foreign row first when it is
// one); and that the chain appends after the damage, linked to the last
// readable record.
func (fr *ForeignRows) CheckGoodRunAndLedger(ctx context.Context, t *testing.T, recordJSON string, foreignK4Allowed bool) {
	t.Helper()
	st := fr.Store
	after, err := st.RunGet(ctx, fr.Good)
	if err != nil {
		t.Fatalf("good run lost after the damage: %v", err)
	}
	if afterText, _ := durable.MarshalRun(after, pyjson.Line); !bytes.Equal(afterText, fr.beforeText) {
		t.Fatalf("good run changed:\n%s\n%s", fr.beforeText, afterText)
	}
	wantRec, recErr := store.RecordFromRow(3, []byte(recordJSON))
	fr.Logs.Take()
	list, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: fr.Good})
	if err != nil {
		t.Fatalf("LedgerList with a damaged row: %v\n%q", err, recordJSON)
	}
	wantSeqs := []int64{1, 2, 3, 4}
	if recErr != nil {
		wantSeqs = []int64{1, 2, 4}
		if l := fr.Logs.Take(); !slices.ContainsFunc(l, func(s string) bool {
			return strings.Contains(s, "run_id="+fr.Good) && strings.Contains(s, "seq=3")
		}) {
			t.Fatalf("skipped row 3 of %s: logged %q, want a warning naming run and seq", fr.Good, l)
		}
	}
	if seqs := recordSeqs(list); !slices.Equal(seqs, wantSeqs) {
		t.Fatalf("LedgerList seqs %v, want %v (RecordFromRow: %v)\n%q", seqs, wantSeqs, recErr, recordJSON)
	}
	for k, r := range list[:2] {
		b1, _ := durable.MarshalRecord(fr.beforeRecs[k], pyjson.Line)
		b2, _ := durable.MarshalRecord(r, pyjson.Line)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("durable record %d changed:\n%s\n%s", k+1, b1, b2)
		}
	}
	if rep := hashchain.VerifyLedgerChain(list[:2]); !rep.OK {
		t.Fatalf("durable chain no longer verifies: %+v", rep)
	}
	if recErr == nil {
		w, _ := durable.MarshalRecord(wantRec, pyjson.Line)
		g, _ := durable.MarshalRecord(list[2], pyjson.Line)
		if !bytes.Equal(w, g) {
			t.Fatalf("foreign record read as\n%s\nwant\n%s", g, w)
		}
	}
	page, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: fr.Good, After: 2, Limit: 1})
	if err != nil || len(page) != 1 || page[0].Seq != wantSeqs[2] {
		t.Fatalf("LedgerList(after 2, limit 1) = %d records (%v); want seq %d", len(page), err, wantSeqs[2])
	}
	if c, err := st.LedgerCount(ctx, fr.Good); err != nil || c != 4 {
		t.Fatalf("LedgerCount = %d, %v; want 4", c, err)
	}
	if finder, ok := st.(store.LedgerFinder); ok {
		found, err := finder.LedgerFindCompleted(ctx, fr.Good, "k2")
		if err != nil || found == nil || found.Seq != 2 {
			t.Fatalf("LedgerFindCompleted(k2) = %+v, %v; want seq 2", found, err)
		}
		found, err = finder.LedgerFindCompleted(ctx, fr.Good, "k4")
		if err != nil || found == nil {
			t.Fatalf("LedgerFindCompleted(k4) = %+v, %v; want a record", found, err)
		}
		if found.Status != durable.StepCompleted || found.IdempotencyKey != "k4" {
			t.Fatalf("LedgerFindCompleted(k4) = seq %d with status %q and key %q; want a completed record of k4\n%q",
				found.Seq, found.Status, found.IdempotencyKey, recordJSON)
		}
		if found.Seq != 4 && !(found.Seq == 3 && foreignK4Allowed && recErr == nil) {
			t.Fatalf("LedgerFindCompleted(k4) = seq %d; want 4", found.Seq)
		}
	}
	// The chain goes on after the damage, linked to the last record.
	next := &durable.StepRecord{RunID: fr.Good, StepID: "s5", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := fr.chained.LedgerAppend(ctx, fr.Good, []*durable.StepRecord{next}); err != nil {
		t.Fatalf("append after the damage: %v", err)
	}
	list, err = st.LedgerList(ctx, &store.LedgerListParams{RunID: fr.Good})
	if err != nil || len(list) != len(wantSeqs)+1 || list[len(list)-1].Seq != 5 {
		t.Fatalf("after append: %d records, %v", len(list), err)
	}
	if list[len(list)-1].PrevHash != list[len(list)-2].RecordHash {
		t.Fatalf("appended record links to %q, want the last readable record's hash %q", list[len(list)-1].PrevHash, list[len(list)-2].RecordHash)
	}
	fr.Logs.Take()
}

// CheckListsSkipUnreadable checks, once runID's stored JSON no longer
// decodes (and it is the only run), that RunList and RunListChildren of
// parentID skip it without failing and log a warning naming it.
func CheckListsSkipUnreadable(ctx context.Context, t *testing.T, st store.Store, logs *testlog.Recorder, runID, parentID string) {
	t.Helper()
	for name, list := range map[string]func() ([]*durable.RunState, error){
		"RunList":         func() ([]*durable.RunState, error) { return st.RunList(ctx, &store.RunListParams{}) },
		"RunListChildren": func() ([]*durable.RunState, error) { return st.RunListChildren(ctx, parentID, "") },
	} {
		logs.Take()
		runs, err := list()
		if err != nil || len(runs) != 0 {
			t.Fatalf("%s: %d runs, %v; want the unreadable run skipped", name, len(runs), err)
		}
		if l := logs.Take(); !slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "run_id="+runID) }) {
			t.Errorf("%s skipped the unreadable run and logged %q; want a warning naming run_id=%s", name, l, runID)
		}
	}
}

// wantWarning fails t unless a line logged since the last Take holds want.
func (fr *ForeignRows) wantWarning(t *testing.T, what, want string) {
	t.Helper()
	if l := fr.Logs.Take(); !slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, want) }) {
		t.Fatalf("%s: logged %q, want a warning holding %q", what, l, want)
	}
}

func recordSeqs(recs []*durable.StepRecord) []int64 {
	seqs := []int64{}
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	return seqs
}
