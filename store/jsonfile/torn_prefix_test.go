package jsonfile

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A writer killed mid-line leaves a torn record without '\n'; a Python
// process (no runner) that appends next writes its whole record plus '\n'
// right after the torn bytes (Python's append does not start a line of
// its own). The line is then TORN + WHOLE. The whole record is durable
// and must be read: the reader decoded the line from its start only,
// failed at the torn bytes and dropped the line, so the completed record
// "good" (and its idempotency key) was gone from LedgerList, LedgerCount
// and LedgerFindCompleted, and a replay ran its effect again. Package doc:
// unreadable lines "are skipped with a warning and never hide the other
// records".
func TestWholeRecordAfterATornOneOnItsLineIsRead(t *testing.T) {
	dir := t.TempDir()
	torn := `{"run_id": "r1", "step_id": "torn", "node_id": "n", "status": "comp`
	writeRawFile(t, filepath.Join(dir, "ledger_r1.jsonl"),
		pyLedgerLine("first", "k1", "2026-01-01T09:00:00+00:00")+
			torn+pyLedgerLine("good", "k2", "2026-01-01T09:00:01+00:00"))
	s := openInternal(t, dir)
	got := listStepIDs(t, s, "r1")
	if !slices.Equal(got, []string{"first", "good"}) {
		t.Errorf("LedgerList = %v, want [first good]: the whole record after the torn bytes is hidden", got)
	}
	rec, err := s.LedgerFindCompleted(t.Context(), "r1", "k2")
	if err != nil || rec == nil {
		t.Errorf("LedgerFindCompleted(k2) = %v, %v; want the completed record %q", rec, err, "good")
	}
	_ = store.LedgerListParams{}
}

// The same for commands.jsonl: a command a Python writer appended after a
// torn command line must be listed after a reopen (a pause or cancel the
// gateway accepted would never be applied), and its seq not given out
// again.
func TestWholeCommandAfterATornOneOnItsLineIsRead(t *testing.T) {
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, "commands.jsonl"),
		cmdLine("c1", "A", 1)+"\n"+`{"command_id": "torn", "run_id": "A", "ty`+cmdLine("c2", "A", 2)+"\n")
	s := openInternal(t, dir)
	recs, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.CommandID)
	}
	if !slices.Equal(ids, []string{"c1", "c2"}) {
		t.Errorf("commands listed = %v, want [c1 c2]: the whole command after the torn bytes is hidden", ids)
	}
	res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c3", RunID: "A", Type: "resume"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seq != 3 {
		t.Errorf("CommandAppend seq = %d, want 3: commands.jsonl already holds c2 at seq 2", res.Seq)
	}
}
