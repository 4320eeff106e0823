package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

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
	seed(strings.ReplaceAll(pfRunSeed, `"RID"`, `"BAD"`), storetest.CompletedRecordLine("GOOD", "s3", "k3"), "waiting", "k", int64(1796083200), "", false)
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
		n++
		fr := &storetest.ForeignRows{Store: st, Logs: logs,
			Good: fmt.Sprintf("good-%d", n), Bad: fmt.Sprintf("bad-%d", n), Parent: fmt.Sprintf("p-%d", n)}
		good, bad, parent := fr.Good, fr.Bad, fr.Parent
		// The seeds spell the ids as placeholders.
		repl := strings.NewReplacer(`"BAD"`, `"`+bad+`"`, `"GOOD"`, `"`+good+`"`, `"PARENT"`, `"`+parent+`"`)
		runJSON, recordJSON = pgText(repl.Replace(runJSON)), pgText(repl.Replace(recordJSON))
		statusCol, waitKeyCol, lifecycle = pgText(statusCol), pgText(waitKeyCol), pgText(lifecycle)
		fr.Prepare(ctx, t)

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
		env.exec(t, ctx, `INSERT INTO `+env.table("ledger")+` (run_id, seq, record_json, completed_key) VALUES ($1, 4, $2, 'k4')`, good, storetest.CompletedRecordLine(good, "s4", "k4"))
		logs.Take()

		got := fr.CheckDamagedRun(ctx, t, runJSON)
		fr.CheckLists(ctx, t, runJSON)
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

		// A foreign row whose completed_key column claims k4 may be found
		// by it; what is found must still be a completed record of k4.
		fr.CheckGoodRunAndLedger(ctx, t, recordJSON, indexK4)

		// A readable damaged run, committed back as read, heals its row.
		if got == nil || got.RunID != bad {
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
