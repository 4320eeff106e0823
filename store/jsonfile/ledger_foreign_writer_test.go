package jsonfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A Python process that runs no runner (serve --no-runner, a script) may
// append to, or delete, a run's ledger while this store is open: Python's
// stores take no lock. These tests play that process with plain file
// operations after the store has scanned the ledger, and check that the
// store's cached ledger index (size, count, offsets, completed keys)
// follows the file, as Python's list and a reopened store read it.

// foreignAppend appends raw bytes to a file as Python's
// JsonlLedgerStore.append does (open(path, "a"), one write).
func foreignAppend(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// openWithR1Ledger opens a store in a new directory and appends recs to
// run r1's ledger: the store and its directory.
func openWithR1Ledger(t *testing.T, recs ...*durable.StepRecord) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s := openInternal(t, dir)
	if err := s.LedgerAppend(t.Context(), "r1", recs); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func stepIDs(recs []*durable.StepRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.StepID)
	}
	return out
}

// TestLedgerAppendAfterForeignTornTail: a Python append killed mid-line
// leaves a tail without '\n' after the store scanned the ledger. The
// store's next append must start a line of its own, decided from the
// file's real last byte (not from the scan), or the accepted record is
// glued onto the torn bytes and gone from every later read (a completed
// effect lost: the replay look-up runs it again).
func TestLedgerAppendAfterForeignTornTail(t *testing.T) {
	ctx := t.Context()
	s, dir := openWithR1Ledger(t, identityRec("r1", 1, durable.StepCompleted, "k1"))
	foreignAppend(t, filepath.Join(dir, "ledger_r1.jsonl"),
		`{"step_id": "py-torn", "run_id": "r1", "node_id": "n", "status": "comp`)
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{identityRec("r1", 2, durable.StepCompleted, "k2")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openInternal(t, dir)
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepIDs(recs); strings.Join(got, ",") != "r1-s1,r1-s2" {
		data, _ := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl"))
		t.Errorf("ledger after a reopen: %v, want [r1-s1 r1-s2]; ledger file:\n%s", got, data)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "k2"); err != nil || r == nil {
		t.Errorf("LedgerFindCompleted(k2) after a reopen = %v, %v; want the accepted record", r, err)
	}
}

// TestLedgerListAfterForeignAppendShowsOwnRecord: after a foreign append
// of a whole record, the store's own next record is the file's third
// (Seq 3), and LedgerList reads the file to its end: [s1, py, s2], not a
// list cut at the size of the first scan.
func TestLedgerListAfterForeignAppendShowsOwnRecord(t *testing.T) {
	ctx := t.Context()
	s, dir := openWithR1Ledger(t, identityRec("r1", 1, durable.StepCompleted, "k1"))
	foreignAppend(t, filepath.Join(dir, "ledger_r1.jsonl"),
		`{"step_id": "py", "run_id": "r1", "node_id": "n", "status": "started"}`+"\n")
	own := identityRec("r1", 2, durable.StepCompleted, "k2")
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{own}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepIDs(recs); strings.Join(got, ",") != "r1-s1,py,r1-s2" {
		t.Errorf("LedgerList after a foreign append: %v, want [r1-s1 py r1-s2] as the file holds them", got)
	}
	if own.Seq != 3 {
		t.Errorf("own record appended after a foreign one got Seq %d, want 3 (its position in the file)", own.Seq)
	}
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 3 {
		t.Errorf("LedgerCount = %d, %v; want 3", n, err)
	}
}

// TestLedgerReadsSeeForeignAppendWithoutOwnAppend: reads alone (no
// append of the store's in between) see the records another process
// appended since the scan, including the completed ones the replay
// look-up must find, and a line that process is still writing (torn at
// the first read) once it is whole.
func TestLedgerReadsSeeForeignAppendWithoutOwnAppend(t *testing.T) {
	ctx := t.Context()
	s, dir := openWithR1Ledger(t, identityRec("r1", 1, durable.StepCompleted, "k1"))
	path := filepath.Join(dir, "ledger_r1.jsonl")
	if r, err := s.LedgerFindCompleted(ctx, "r1", "py-key"); err != nil || r != nil {
		t.Fatalf("LedgerFindCompleted before the foreign append = %v, %v", r, err)
	}
	foreignAppend(t, path, `{"step_id": "py", "run_id": "r1", "node_id": "n", "status": "completed", `)
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 1 {
		t.Errorf("LedgerCount with a line being written = %d, %v; want 1", n, err)
	}
	foreignAppend(t, path, `"idempotency_key": "py-key"}`+"\n")
	r, err := s.LedgerFindCompleted(ctx, "r1", "py-key")
	if err != nil || r == nil || r.StepID != "py" || r.Seq != 2 {
		t.Errorf("LedgerFindCompleted of a foreign completed record = %+v, %v; want step py at seq 2", r, err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1", After: 1})
	if err != nil || strings.Join(stepIDs(recs), ",") != "py" {
		t.Errorf("LedgerList(after 1) = %v, %v; want [py]", stepIDs(recs), err)
	}
}

// TestLedgerAppendAfterForeignDelete: Python's JsonlLedgerStore.delete
// removes ledger_<id>.jsonl. The store's next append creates the file
// again, and its record is the new file's first (Seq 1), not one placed
// by the deleted file's size and count.
func TestLedgerAppendAfterForeignDelete(t *testing.T) {
	ctx := t.Context()
	s, dir := openWithR1Ledger(t,
		identityRec("r1", 1, durable.StepCompleted, "k1"), identityRec("r1", 2, durable.StepCompleted, "k2"))
	if err := os.Remove(filepath.Join(dir, "ledger_r1.jsonl")); err != nil {
		t.Fatal(err)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "k1"); err != nil || r != nil {
		t.Errorf("LedgerFindCompleted(k1) after a foreign delete = %v, %v; want none", r, err)
	}
	own := identityRec("r1", 3, durable.StepCompleted, "k3")
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{own}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatalf("LedgerList after a foreign delete and an append: %v", err)
	}
	if got := stepIDs(recs); len(got) != 1 || got[0] != "r1-s3" || recs[0].Seq != 1 {
		t.Errorf("LedgerList after a foreign delete and an append: %v, want [r1-s3] at seq 1", got)
	}
	if own.Seq != 1 {
		t.Errorf("record appended to a re-created ledger got Seq %d, want 1", own.Seq)
	}
}
