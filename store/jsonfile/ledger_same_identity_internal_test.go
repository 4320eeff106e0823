package jsonfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// completedLine is a ledger line (with its '\n') of a completed record
// with step id and key, padded through the step id to exactly n bytes.
func completedLine(t *testing.T, step, key string, n int) string {
	t.Helper()
	line := func(pad string) string {
		return `{"run_id": "r1", "step_id": "` + step + pad + `", "node_id": "n", "status": "completed", ` +
			`"effect": null, "result": {"ok": true}, "error": null, "attempt": 1, "idempotency_key": "` + key + `"}` + "\n"
	}
	short := len(line(""))
	if n < short {
		t.Fatalf("completedLine: %d bytes asked, %d at least", n, short)
	}
	return line(strings.Repeat("p", n-short))
}

// A ledger another process replaced by a longer one under the same file
// identity (rewritten in place, or deleted and created again under the
// inode number the file system hands out again, as ext4 does at once),
// whose lines happen to end where the old file ended, is another file:
// it is read whole, not from the old end on. Read from there, the store
// kept the old file's count and keys and never saw the new file's first
// records: a completed record's effect would run again on replay.
func TestLedgerReplacedUnderTheSameIdentityIsReadWhole(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger_r1.jsonl")
	writeRawFile(t, path, completedLine(t, "old1", "kold1", 200)+completedLine(t, "old2", "kold2", 200))
	s := openInternal(t, dir)
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 2 {
		t.Fatalf("before: LedgerCount = %d, %v", n, err)
	}
	// Rewritten in place (O_TRUNC keeps the inode): a first line of 400
	// bytes ends where the old file did.
	rewriteInPlace(t, path, completedLine(t, "new1", "knew1", 400)+completedLine(t, "new2", "knew2", 200)+completedLine(t, "new3", "knew3", 200))
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 3 {
		t.Errorf("LedgerCount = %d, %v; want 3", n, err)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "knew1"); err != nil || r == nil {
		t.Errorf("LedgerFindCompleted(knew1) = %v, %v; want the file's first record", r, err)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "kold1"); err != nil || r != nil {
		t.Errorf("LedgerFindCompleted(kold1) = %v, %v; want nothing: that file is gone", r, err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, r := range recs {
		steps = append(steps, strings.TrimRight(r.StepID, "p"))
	}
	if !slices.Equal(steps, []string{"new1", "new2", "new3"}) {
		t.Errorf("listed %q", steps)
	}
}

// A ledger rewritten in place (same file identity) that keeps its first
// line, so that its first bytes match the ones the store kept, but whose
// second line is now longer, so that the old end falls inside a line, is
// another file too: it is read whole. Read from the old end on, the
// store counted the rest of the cut line's neighbour as a new record and
// kept the keys of records that are gone (k2 found, so a replay would
// skip an effect that never completed in this file).
func TestLedgerRewrittenInPlaceWithTheSameHeadIsReadWhole(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger_r1.jsonl")
	first := completedLine(t, "s1", "k1", 400) // longer than headBytes: the head is all of it
	writeRawFile(t, path, first+completedLine(t, "s2", "k2", 200)+completedLine(t, "s3", "k3", 200))
	s := openInternal(t, dir)
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 3 {
		t.Fatalf("before: LedgerCount = %d, %v", n, err)
	}
	// The same first line, then a line of 500 bytes across the old end
	// (byte 800), then one more: 3 records, 1100 bytes.
	rewriteInPlace(t, path, first+completedLine(t, "sx", "kx", 500)+completedLine(t, "sy", "ky", 200))
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 3 {
		t.Errorf("LedgerCount = %d, %v; want 3", n, err)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "k2"); err != nil || r != nil {
		t.Errorf("LedgerFindCompleted(k2) = %v, %v; want nothing: that record is gone", r, err)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "kx"); err != nil || r == nil || r.Seq != 2 {
		t.Errorf("LedgerFindCompleted(kx) = %+v, %v; want the record at seq 2", r, err)
	}
}

// rewriteInPlace writes data over the file at path (O_TRUNC keeps its
// inode) and fails the test if the file's identity changed after all:
// the case the caller means to reach is a rewrite under the same identity.
func rewriteInPlace(t *testing.T, path, data string) {
	t.Helper()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	writeRawFile(t, path, data)
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fileIDOf(before) != fileIDOf(after) {
		t.Fatal("a file rewritten in place changed identity: the test no longer reaches the case")
	}
}
