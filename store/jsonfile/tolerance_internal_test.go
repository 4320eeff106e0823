package jsonfile

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// pyLedgerLine is a ledger record as Python's JsonlLedgerStore writes it,
// with startedAt as its started_at.
func pyLedgerLine(stepID, key, startedAt string) string {
	return `{"run_id": "r1", "step_id": "` + stepID + `", "node_id": "n", "status": "completed", ` +
		`"effect": {"type": "llm_call", "payload": {}, "result_key": null}, "result": {"step": "` + stepID + `"}, ` +
		`"error": null, "started_at": "` + startedAt + `", "ended_at": null, "actor_id": null, ` +
		`"session_id": null, "attempt": 1, "idempotency_key": "` + key + `"}` + "\n"
}

// A ledger record that is JSON but does not decode as a StepRecord (here
// a started_at that is a list, not a string) is skipped with a warning by LedgerList, and
// the generic store.FindCompleted scan (over LedgerList) then finds the
// next completed record with the key. The JSON store's LedgerFindCompleted
// fast path indexes the raw object and fails on it instead: every look-up
// of that key errors, so the kernel's tick fails each time and the run can
// never go on, and the valid record behind it is hidden. Package doc:
// unreadable records "are skipped with a warning and never hide the other
// records".
func TestFindCompletedSkipsUndecodableRecord(t *testing.T) {
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, "ledger_r1.jsonl"),
		strings.Replace(pyLedgerLine("bad", "k", "x"), `"x"`, `["not", "a", "time"]`, 1)+
			pyLedgerLine("good", "k", "2026-01-01T09:00:00+00:00"))
	s := openInternal(t, dir)
	if got := listStepIDs(t, s, "r1"); !slices.Equal(got, []string{"good"}) {
		t.Fatalf("precondition: LedgerList = %v, want [good] (the bad record skipped)", got)
	}
	rec, err := store.FindCompleted(context.Background(), s, "r1", "k")
	if err != nil {
		t.Fatalf("FindCompleted(k) = %v; LedgerList skips the undecodable record and lists the completed record %q with the key", err, "good")
	}
	if rec == nil || rec.StepID != "good" {
		t.Fatalf("FindCompleted(k) = %+v, want step good", rec)
	}
}

// The seq counter is rebuilt at open from seqOf, which reads only an
// integer literal, while the command itself is decoded by CommandFromJSON,
// which reads an integral float (7.0) as 7 (as Python's int() does). A
// command stored with "seq": 2.0 is listed at seq 2, yet the next append is
// handed seq 2 again: two commands with one seq, and a consumer whose
// cursor is 2 never reads the new one. (Python rebuilds its counter with
// int(s), so it would issue 3.)
func TestFloatSeqNotReissued(t *testing.T) {
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, "commands.jsonl"), cmdLine("c1", "A", 1)+"\n"+
		`{"command_id": "c2", "run_id": "A", "type": "pause", "payload": {}, "ts": "2026-01-01T09:00:00+00:00", "client_id": null, "seq": 2.0}`+"\n")
	s := openInternal(t, dir)
	recs, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Seq != 2 {
		t.Fatalf("precondition: listed %d commands (want c1 at 1, c2 at 2)", len(recs))
	}
	res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c3", RunID: "A", Type: "resume"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seq != 3 {
		t.Fatalf("CommandAppend seq = %d, want 3: commands.jsonl already holds a command at seq 2", res.Seq)
	}
}

// A line whose first command is whole and whose tail is torn (a Python
// writer killed mid-append, then another append after it) is read back
// by walkLedger as its first command, which CommandListAfter lists. But
// CommandDeleteByRun only splits lines that split cleanly, so it neither
// drops that command from the file nor from memory: a command of a
// deleted run stays listed (and its count is not returned), though
// CommandStore promises that the delete "removes every command of a run".
func TestDeleteByRunDropsCommandBeforeATornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "commands.jsonl")
	writeRawFile(t, path, cmdLine("c1", "A", 1)+`{"command_id": "c2", "run_id": "B", "ty`+"\n"+cmdLine("c3", "B", 3)+"\n")
	s := openInternal(t, dir)
	if got := listCommandIDs(t, s); !slices.Equal(got, []string{"c1", "c3"}) {
		t.Fatalf("precondition: listed %v, want [c1 c3]", got)
	}
	n, err := s.CommandDeleteByRun(t.Context(), "A")
	if err != nil {
		t.Fatal(err)
	}
	got := listCommandIDs(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := listCommandIDs(t, openInternal(t, dir))
	if n != 1 || slices.Contains(got, "c1") || slices.Contains(reopened, "c1") {
		data, _ := os.ReadFile(path)
		t.Fatalf("CommandDeleteByRun(A) = %d (want 1); listed after it %v, after a reopen %v (want [c3]); commands.jsonl = %q",
			n, got, reopened, data)
	}
}

// When a commit's new state is put in place but the directory sync that
// follows fails (EMFILE here, as a busy server runs into), RunCommit
// returns the error without updating the run's index entry. RunGet then
// serves the new state from the file, while RunIndex, RunList(status) and
// the due index keep describing the old one until the store reopens: a
// completed run is listed as running by RunIndex and is missing from
// RunList(status=completed). (The same holds for replaceFile and writeNew,
// whose directory-sync failures also leave the file in place.)
func TestIndexFollowsRunFileAfterUnsyncedCommit(t *testing.T) {
	dir := t.TempDir()
	st, _, _, commitErr := commitTerminalDirSyncFailing(t, dir)
	if commitErr == nil {
		t.Fatal("precondition: the directory sync did not fail")
	}
	got, err := st.RunGet(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCompleted {
		t.Fatalf("precondition: the run file was not put in place (run %s)", got.Status)
	}
	rows, err := st.RunIndex(context.Background(), &store.RunIndexParams{})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := st.RunList(context.Background(), &store.RunListParams{Status: durable.RunCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Status != durable.RunCompleted || len(listed) != 1 {
		status := durable.RunStatus("")
		if len(rows) == 1 {
			status = rows[0].Status
		}
		t.Fatalf("after RunCommit returned %v: RunGet says %s, but RunIndex says %q and RunList(status=completed) lists %d runs",
			commitErr, got.Status, status, len(listed))
	}
}
