package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// pfRecordLine is a completed record row of runID as the stores write it.
func pfRecordLine(runID, step, key string) string {
	return `{"run_id": "` + runID + `", "step_id": "` + step + `", "node_id": "n", "status": "completed", "effect": null, "result": {"x": 1}, "error": null, "started_at": "2026-11-29T22:47:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "` + key + `", "prev_hash": null, "record_hash": null, "signature": null}`
}

const pfRunSeed = `{"run_id": "RID", "workflow_id": "wf", "status": "waiting", "current_node": "n", "vars": {"a": [1, 2.5, "é"]}, "waiting": {"reason": "until", "wait_key": "k", "until": "2026-12-01T00:00:00+00:00", "resume_to_node": "n", "result_key": "r", "prompt": "?", "choices": ["yes"], "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "actor_id": null, "session_id": null, "parent_run_id": "PARENT"}`

// FuzzPostgresForeignRows: another writer (a tool, a hand edit, a newer
// gateway) leaves, in a shared PostgreSQL schema, a run row whose run_json
// text and index columns (status, wait_key, due_at, lifecycle_json) are
// arbitrary and disagree with each other, and a ledger row whose
// record_json is arbitrary and whose completed_key may claim a completion
// the JSON does not hold. run_json and record_json are text columns, so
// any text PostgreSQL can hold is fuzzed (not only valid JSON). For a fresh
// pair of runs per input it checks that:
//   - RunGet of the damaged run succeeds exactly when run_json decodes
//     (and gives that run), else fails with store.ErrNotFound, an error
//     naming the run and a warning naming it;
//   - RunListChildren and RunList (by parent) never fail, list the
//     damaged run exactly when it decodes, and log a warning naming the run
//     when they skip it; RunIndex and RunListDue never fail;
//   - the good run and its hash-chained records written before the damage
//     are read unchanged and still verify; LedgerList lists every valid
//     row and the damaged one exactly when it decodes, logs a warning
//     naming run and seq when it skips it, and pages past it;
//   - LedgerFindCompleted finds the valid completed records, and what it
//     returns is a completed record of the key asked for, whatever the
//     completed_key column says;
//   - the chain still appends after the damage, linked to the last
//     readable record;
//   - a damaged run that decodes can be committed back as read, after
//     which its index columns agree with it again (RunIndex status,
//     RunListDue, RunList by wait key).
func FuzzPostgresForeignRows(f *testing.F) {
	seed := func(runJSON, recordJSON, status, waitKey string, dueSecs int64, lifecycle string, indexK4 bool) {
		f.Add(runJSON, recordJSON, status, waitKey, dueSecs, lifecycle, indexK4)
	}
	seed(strings.ReplaceAll(pfRunSeed, `"RID"`, `"BAD"`), pfRecordLine("GOOD", "s3", "k3"), "waiting", "k", int64(1796083200), "", false)
	seed(`{"run_id": "BAD", "status": "running", "vars": null}`, `{"run_id": "x", "status": "completed", "idempotency_key": "k2"}`, "completed", "", int64(0), `{"status": 5}`, true)
	seed(`not json`, `{"run_id": "x", "step_id": "to`, "running", "zz", int64(-5), "[", true)
	seed(`null`, `[1, 2]`, "", "", int64(0), "null", false)
	seed(`{"run_id": "BAD", "workflow_id": 5}`, `{"status": "completed", "attempt": "two", "idempotency_key": "k4"}`, "bogus", "k", int64(99), "{}", true)
	seed(`{"run_id": "BAD", "status": "waiting", "waiting": {"reason": "until", "until": "next tuesday"}}`, `{"started_at": "2026-13-01T00:00:00"}`, "waiting", "", int64(1), "", false)
	seed(strings.Replace(strings.ReplaceAll(pfRunSeed, `"RID"`, `"BAD"`), `"vars": {`, `"vars": {"\ud800": NaN, "\u0000": 1, `, 1), `{"run_id": "x", "status": "failed", "idempotency_key": "k4"}`, "running", "\u0001", int64(0), "", true)
	seed(`{"run_id": "other", "status": "completed"}`, `{"run_id": "GOOD", "status": "completed", "idempotency_key": "k4", "seq": 99}`, "completed", "", int64(0), "", true)
	seed(`{"run_id": "BAD", "workflow_id": "wf", "status": "running", "vars": {"_runtime": {"control": {"paused": true}}}}`, `{}`, "waiting", "", int64(10), "", true)

	setup := pfFuzzSetup(f)
	var n int
	f.Fuzz(func(t *testing.T, runJSON, recordJSON, statusCol, waitKeyCol string, dueSecs int64, lifecycle string, indexK4 bool) {
		env := setup(t)
		st, logs := env.st, env.logs
		t.Cleanup(func() { env.wipe(t) })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs := hashchain.Wrap(st)
		n++
		good, bad, parent := fmt.Sprintf("good-%d", n), fmt.Sprintf("bad-%d", n), fmt.Sprintf("p-%d", n)
		// The seeds spell the ids as placeholders.
		repl := strings.NewReplacer(`"BAD"`, `"`+bad+`"`, `"GOOD"`, `"`+good+`"`, `"PARENT"`, `"`+parent+`"`)
		runJSON, recordJSON = pgText(repl.Replace(runJSON)), pgText(repl.Replace(recordJSON))
		statusCol, waitKeyCol, lifecycle = pgText(statusCol), pgText(waitKeyCol), pgText(lifecycle)

		// What is durable before the damage.
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
		var wk, lc *string
		if waitKeyCol != "" {
			wk = &waitKeyCol
		}
		if lifecycle != "" {
			lc = &lifecycle
		}
		var due *time.Time
		if dueSecs != 0 {
			d := time.Unix(dueSecs%100_000_000_000, 0).UTC()
			due = &d
		}
		env.exec(t, ctx, `UPDATE `+env.table("runs")+` SET run_json = $1, status = $2, wait_key = $3, due_at = $4, lifecycle_json = $5 WHERE run_id = $6`,
			runJSON, statusCol, wk, due, lc, bad)
		var ck *string
		if indexK4 {
			k4 := "k4"
			ck = &k4
		}
		env.exec(t, ctx, `INSERT INTO `+env.table("ledger")+` (run_id, seq, record_json, completed_key) VALUES ($1, 3, $2, $3)`, good, recordJSON, ck)
		env.exec(t, ctx, `INSERT INTO `+env.table("ledger")+` (run_id, seq, record_json, completed_key) VALUES ($1, 4, $2, 'k4')`, good, pfRecordLine(good, "s4", "k4"))
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
		lists := []struct {
			name string
			list func() ([]*durable.RunState, error)
		}{
			{"RunListChildren", func() ([]*durable.RunState, error) { return st.RunListChildren(ctx, parent, "") }},
			{"RunList", func() ([]*durable.RunState, error) { return st.RunList(ctx, &store.RunListParams{ParentID: parent}) }},
		}
		for _, l := range lists {
			logs.Take()
			kids, err := l.list()
			if err != nil {
				t.Fatalf("%s with a damaged row: %v", l.name, err)
			}
			var ids []string
			for _, r := range kids {
				ids = append(ids, r.RunID)
			}
			if !slices.Contains(ids, good) {
				t.Fatalf("%s lost the good run: %v", l.name, ids)
			}
			if wantErr == nil && want.RunID == bad && !slices.Contains(ids, bad) {
				t.Fatalf("%s lost a readable foreign run_json: %v\n%q", l.name, ids, runJSON)
			}
			if wantErr != nil {
				if len(ids) != 1 {
					t.Fatalf("%s lists %v; want the unreadable run skipped", l.name, ids)
				}
				if lg := logs.Take(); !slices.ContainsFunc(lg, func(s string) bool { return strings.Contains(s, "run_id="+bad) }) {
					t.Fatalf("%s skipped the unreadable run_json of %s: logged %q, want a warning naming the run", l.name, bad, lg)
				}
			}
		}
		logs.Take()
		idx, err := st.RunIndex(ctx, &store.RunIndexParams{})
		if err != nil {
			t.Fatalf("RunIndex with a damaged row: %v", err)
		}
		if len(idx) != 2 {
			t.Fatalf("RunIndex lists %d runs, want both rows", len(idx))
		}
		far := time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
		if _, err := st.RunListDue(ctx, &store.RunListDueParams{Now: far}); err != nil {
			t.Fatalf("RunListDue with a damaged row: %v", err)
		}
		if _, err := st.RunNextDue(ctx); err != nil {
			t.Fatalf("RunNextDue with a damaged row: %v", err)
		}

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
		seqs := recordSeqs(list)
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
		if err != nil || found == nil {
			t.Fatalf("LedgerFindCompleted(k4) = %+v, %v; want a record", found, err)
		}
		if found.Status != durable.StepCompleted || found.IdempotencyKey != "k4" {
			t.Fatalf("LedgerFindCompleted(k4) = seq %d with status %q and key %q; want a completed record of k4\n%q",
				found.Seq, found.Status, found.IdempotencyKey, recordJSON)
		}
		if found.Seq != 4 && !(found.Seq == 3 && indexK4 && recErr == nil) {
			t.Fatalf("LedgerFindCompleted(k4) = seq %d; want 4", found.Seq)
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

		// A readable damaged run, committed back as read, heals its row.
		if wantErr != nil || got.RunID != bad {
			return
		}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: got}); err != nil {
			if errors.Is(err, store.ErrInvalidID) {
				return // an id past btree's key limit (docs/compatibility.md)
			}
			t.Fatalf("committing back the run RunGet read: %v\n%q", err, runJSON)
		}
		idx, err = st.RunIndex(ctx, &store.RunIndexParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range idx {
			if row.RunID == bad && row.Status != got.Status {
				t.Fatalf("after the commit RunIndex gives status %q, the run has %q", row.Status, got.Status)
			}
		}
		dueRuns, err := st.RunListDue(ctx, &store.RunListDueParams{Now: far})
		if err != nil {
			t.Fatal(err)
		}
		_, isDue := store.Deadline(got)
		listed := slices.ContainsFunc(dueRuns, func(d store.DueRun) bool { return d.RunID == bad })
		if isDue != listed {
			t.Fatalf("after the commit RunListDue lists the run: %v; store.Deadline: %v\n%q", listed, isDue, runJSON)
		}
		if w := got.Waiting; w != nil && w.WaitKey != "" {
			byKey, err := st.RunList(ctx, &store.RunListParams{WaitKeys: []string{w.WaitKey}})
			if err != nil || !slices.ContainsFunc(byKey, func(r *durable.RunState) bool { return r.RunID == bad }) {
				t.Fatalf("after the commit RunList by wait key %q: %d runs, %v", w.WaitKey, len(byKey), err)
			}
		}
	})
}
