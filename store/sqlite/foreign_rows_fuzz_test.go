package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/testlog"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// fzRecordLine is a completed record row of runID as Python writes it.
func fzRecordLine(runID, step, key string) string {
	return `{"run_id": "` + runID + `", "step_id": "` + step + `", "node_id": "n", "status": "completed", "effect": null, "result": {"x": 1}, "error": null, "started_at": "2026-11-29T22:47:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "` + key + `", "prev_hash": null, "record_hash": null, "signature": null}`
}

const fzRunSeed = `{"run_id": "RID", "workflow_id": "wf", "status": "waiting", "current_node": "n", "vars": {"a": [1, 2.5, "é"]}, "waiting": {"reason": "user", "wait_key": "k", "until": null, "resume_to_node": "n", "result_key": "r", "prompt": "?", "choices": ["yes"], "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`

// FuzzSqliteForeignRows: another writer (Python, a tool, a torn write)
// leaves a run_json and a ledger record_json holding arbitrary text in a
// shared store. For a fresh pair of runs per input it checks that:
//   - RunGet of the damaged run succeeds exactly when the text decodes to
//     a run (and gives that run), else fails with store.ErrNotFound and an
//     error naming the run; RunListChildren lists it exactly then, and
//     never fails;
//   - the good run and its hash-chained records (written before the damage)
//     are still read unchanged and still verify;
//   - LedgerList of the damaged ledger lists every valid row, the damaged
//     one exactly when it decodes (as RecordFromRow reads it), logs a
//     warning naming the run and seq when it skips it, and pages past it;
//   - LedgerFindCompleted still finds the valid completed record, and the
//     chain still appends (to the last readable record) after the damage.
func FuzzSqliteForeignRows(f *testing.F) {
	f.Add(strings.ReplaceAll(fzRunSeed, `"RID"`, `"x"`), fzRecordLine("x", "s3", "k3"))
	f.Add(`{"run_id": "x", "status": "running", "vars": null}`, `{"run_id": "x", "status": "completed", "idempotency_key": "k2"}`)
	f.Add(`not json`, `{"run_id": "x", "step_id": "to`)
	f.Add(`null`, `[1, 2]`)
	f.Add(`{"run_id": "x", "workflow_id": 5}`, `{"status": "completed", "attempt": "two"}`)
	f.Add(`{"run_id": "x", "status": "waiting", "waiting": {"reason": "until", "until": "next tuesday"}}`, `{"started_at": "2026-13-01T00:00:00"}`)
	f.Add(strings.Replace(fzRunSeed, `"vars": {`, `"vars": {"\ud800": NaN, `, 1), "{\"run_id\": \"x\", \"result\": \"\xff\"}")

	logs := &testlog.Recorder{}
	path := filepath.Join(f.TempDir(), "runtime.sqlite3")
	var (
		once sync.Once
		st   *sqlite.Store
		n    atomic.Int64
	)
	setup := func(t *testing.T) {
		var err error
		st, err = sqlite.New(context.Background(), sqlite.Config{Path: path, Shared: true, Synchronous: "OFF", Logger: logs.Logger()})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
	}
	var d *sql.DB
	raw := func(t *testing.T) func(q string, args ...any) {
		d = rawDB(t, path)
		return func(q string, args ...any) {
			if _, err := d.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	var exec func(q string, args ...any)
	f.Cleanup(func() {
		if d != nil {
			_ = d.Close()
		}
		if st != nil {
			_ = st.Close()
		}
	})
	f.Fuzz(func(t *testing.T, runJSON, recordJSON string) {
		once.Do(func() { setup(t); exec = raw(t) })
		ctx := context.Background()
		hs := hashchain.Wrap(st)
		i := n.Add(1)
		good, bad, parent := fmt.Sprintf("good-%d", i), fmt.Sprintf("bad-%d", i), fmt.Sprintf("p-%d", i)

		// What is durable before the damage: a good run with a chained
		// ledger, and the run the foreign writer will damage.
		gr := &durable.RunState{RunID: good, WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: parent, Vars: map[string]any{"v": "é"}}
		recs := []*durable.StepRecord{
			{RunID: good, StepID: "s1", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k1", Attempt: 1},
			{RunID: good, StepID: "s2", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k2", Attempt: 1, Result: map[string]any{"r": "ok"}},
		}
		if err := hs.RunCommit(ctx, &store.CommitParams{Run: gr, Create: true, Records: recs}); err != nil {
			t.Fatalf("commit good: %v", err)
		}
		br := &durable.RunState{RunID: bad, WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: parent}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: br, Create: true}); err != nil {
			t.Fatalf("commit bad: %v", err)
		}
		before, err := st.RunGet(ctx, good)
		if err != nil {
			t.Fatalf("get good: %v", err)
		}
		beforeText, _ := durable.MarshalRun(before, pyjson.Line)
		beforeRecs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: good})
		if err != nil || len(beforeRecs) != 2 {
			t.Fatalf("list good: %d, %v", len(beforeRecs), err)
		}

		// The foreign writer.
		exec(`UPDATE runs SET run_json = ? WHERE run_id = ?`, runJSON, bad)
		exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, 3, ?)`, good, recordJSON)
		exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, 4, ?)`, good, fzRecordLine(good, "s4", "k4"))
		logs.Take()

		// The damaged run.
		want, wantErr := durable.UnmarshalRunString(runJSON)
		got, err := st.RunGet(ctx, bad)
		switch {
		case wantErr == nil && err != nil:
			t.Fatalf("RunGet of a run_json that decodes: %v\n%q", err, runJSON)
		case wantErr != nil && err == nil:
			t.Fatalf("RunGet of a run_json that does not decode (%v) succeeded\n%q", wantErr, runJSON)
		case err != nil && (!errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), bad)):
			t.Fatalf("RunGet error %q: want store.ErrNotFound naming run %s", err, bad)
		case err == nil:
			w, _ := durable.MarshalRun(want, pyjson.Line)
			g, _ := durable.MarshalRun(got, pyjson.Line)
			if !bytes.Equal(w, g) {
				t.Fatalf("RunGet of a foreign run_json:\n got %s\nwant %s", g, w)
			}
		}
		if err != nil {
			if l := logs.Take(); !slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "run_id="+bad) }) {
				t.Fatalf("unreadable run_json of %s: logged %q, want a warning naming the run", bad, l)
			}
		}
		kids, err := st.RunListChildren(ctx, parent, "")
		if err != nil {
			t.Fatalf("RunListChildren with a damaged row: %v", err)
		}
		var ids []string
		for _, r := range kids {
			ids = append(ids, r.RunID)
		}
		if !slices.Contains(ids, good) {
			t.Fatalf("RunListChildren lost the good run: %v", ids)
		}
		if wantErr == nil && want.RunID == bad && !slices.Contains(ids, bad) {
			t.Fatalf("RunListChildren lost a readable foreign run_json: %v\n%q", ids, runJSON)
		}
		if wantErr != nil && len(ids) != 1 {
			t.Fatalf("RunListChildren lists %v; want the unreadable run skipped", ids)
		}
		if wantErr != nil {
			if l := logs.Take(); !slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "run_id="+bad) }) {
				t.Fatalf("RunListChildren skipped the unreadable run_json of %s: logged %q, want a warning naming the run", bad, l)
			}
		}
		logs.Take()

		// The good run and the durable part of its ledger.
		after, err := st.RunGet(ctx, good)
		if err != nil {
			t.Fatalf("good run lost after the damage: %v", err)
		}
		if afterText, _ := durable.MarshalRun(after, pyjson.Line); !bytes.Equal(afterText, beforeText) {
			t.Fatalf("good run changed:\n%s\n%s", beforeText, afterText)
		}
		wantRec, recErr := store.RecordFromRow(3, []byte(recordJSON))
		list, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: good})
		if err != nil {
			t.Fatalf("LedgerList with a damaged row: %v\n%q", err, recordJSON)
		}
		var seqs []int64
		for _, r := range list {
			seqs = append(seqs, r.Seq)
		}
		wantSeqs := []int64{1, 2, 3, 4}
		if recErr != nil {
			wantSeqs = []int64{1, 2, 4}
			if l := logs.Take(); !slices.ContainsFunc(l, func(s string) bool {
				return strings.Contains(s, "run_id="+good) && strings.Contains(s, "seq=3")
			}) {
				t.Fatalf("skipped row 3 of %s: logged %q, want a warning naming run and seq", good, l)
			}
		}
		if !slices.Equal(seqs, wantSeqs) {
			t.Fatalf("LedgerList seqs %v, want %v (RecordFromRow: %v)\n%q", seqs, wantSeqs, recErr, recordJSON)
		}
		for k, r := range list[:2] {
			b1, _ := durable.MarshalRecord(beforeRecs[k], pyjson.Line)
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
		page, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: good, After: 2, Limit: 1})
		if err != nil || len(page) != 1 || page[0].Seq != wantSeqs[2] {
			t.Fatalf("LedgerList(after 2, limit 1) = %d records (%v); want seq %d", len(page), err, wantSeqs[2])
		}
		if c, err := st.LedgerCount(ctx, good); err != nil || c != 4 {
			t.Fatalf("LedgerCount = %d, %v; want 4", c, err)
		}
		found, err := st.LedgerFindCompleted(ctx, good, "k2")
		if err != nil || found == nil || found.Seq != 2 {
			t.Fatalf("LedgerFindCompleted(k2) = %+v, %v; want seq 2", found, err)
		}
		found, err = st.LedgerFindCompleted(ctx, good, "k4")
		if err != nil || found == nil || found.Seq != 4 {
			if recErr == nil && wantRec.Status == durable.StepCompleted && wantRec.IdempotencyKey == "k4" && found != nil && found.Seq == 3 {
				// the foreign row is an earlier completion of k4
			} else {
				t.Fatalf("LedgerFindCompleted(k4) = %+v, %v; want seq 4", found, err)
			}
		}
		// The chain goes on after the damage, linked to the last record.
		next := &durable.StepRecord{RunID: good, StepID: "s5", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
		if err := hs.LedgerAppend(ctx, good, []*durable.StepRecord{next}); err != nil {
			t.Fatalf("append after the damage: %v", err)
		}
		list, err = st.LedgerList(ctx, &store.LedgerListParams{RunID: good})
		if err != nil || len(list) != len(wantSeqs)+1 || list[len(list)-1].Seq != 5 {
			t.Fatalf("after append: %d records, %v", len(list), err)
		}
		if list[len(list)-1].PrevHash != list[len(list)-2].RecordHash {
			t.Fatalf("appended record links to %q, want the last readable record's hash %q", list[len(list)-1].PrevHash, list[len(list)-2].RecordHash)
		}
		logs.Take()
	})
}

// TestListSkipWarningNamesRun: a list (RunList, RunListChildren)
// skipping a row whose run_json does not decode logged "skipping
// unreadable run_json" with the decode error alone (e.g. "invalid JSON at
// offset 0"), so the warning did not say which run was skipped; RunGet's
// warning and the ledger's ("skipping undecodable ledger record") name it.
func TestListSkipWarningNamesRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	logs := &testlog.Recorder{}
	st, err := sqlite.New(ctx, sqlite.Config{Path: path, Shared: true, Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &durable.RunState{RunID: "unreadable-1", WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: "p"}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET run_json = 'not json' WHERE run_id = 'unreadable-1'`); err != nil {
		t.Fatal(err)
	}
	for name, list := range map[string]func() ([]*durable.RunState, error){
		"RunList":         func() ([]*durable.RunState, error) { return st.RunList(ctx, &store.RunListParams{}) },
		"RunListChildren": func() ([]*durable.RunState, error) { return st.RunListChildren(ctx, "p", "") },
	} {
		logs.Take()
		runs, err := list()
		if err != nil || len(runs) != 0 {
			t.Fatalf("%s: %d runs, %v; want the unreadable run skipped", name, len(runs), err)
		}
		if l := logs.Take(); !slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "run_id=unreadable-1") }) {
			t.Errorf("%s skipped the unreadable run and logged %q; want a warning naming run_id=unreadable-1", name, l)
		}
	}
}
