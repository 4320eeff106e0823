package jsonfile

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestNonUTF8RunIDIsRefused: a run id that is not UTF-8 (a Go host's
// string, e.g. a CLI --run-id) would name the file with its raw bytes
// while the file's JSON spells run_id with U+FFFD, so after a reopen the
// file no longer matches its name and the run is lost. It is refused up
// front with store.ErrInvalidID, as store.PrepareCommand refuses such
// command ids, and nothing is written.
func TestNonUTF8RunIDIsRefused(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	const id = "run-\xff-1"
	err := s.RunCommit(ctx, &store.CommitParams{Run: identityRun(id, "x", durable.RunRunning), Create: true,
		Records: []*durable.StepRecord{identityRec(id, 1, durable.StepCompleted, "k1")}})
	if !errors.Is(err, store.ErrInvalidID) {
		t.Errorf("create of run %q: %v, want store.ErrInvalidID", id, err)
	}
	if err := s.LedgerAppend(ctx, id, []*durable.StepRecord{identityRec(id, 1, durable.StepCompleted, "k1")}); !errors.Is(err, store.ErrInvalidID) {
		t.Errorf("ledger append of run %q: %v, want store.ErrInvalidID", id, err)
	}
	if _, err := os.Stat(s.runPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run file of a refused id: %v, want none", err)
	}
	if _, err := os.Stat(s.ledgerPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ledger file of a refused id: %v, want none", err)
	}
}

// TestTooLongRunIDIsRefusedNamingIt: a run id whose temp file name the
// file system would refuse is refused at create, with ErrInvalidID and
// an error that quotes the id's start (not all of its bytes), and nothing
// is written.
func TestTooLongRunIDIsRefusedNamingIt(t *testing.T) {
	s := openInternal(t, t.TempDir())
	id := "order-é" + strings.Repeat("0123456789", 30)
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: identityRun(id, "x", durable.RunRunning), Create: true})
	if !errors.Is(err, store.ErrInvalidID) {
		t.Fatalf("create of a %d-byte run id: %v, want store.ErrInvalidID", len(id), err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"order-é0123`) || strings.Contains(msg, id) || !strings.Contains(msg, "308-byte id") {
		t.Errorf("error %q: want the id's quoted start and its length, not the whole id", msg)
	}
	if _, err := os.Stat(s.runPath(id)); err == nil {
		t.Error("a refused id left a run file")
	}
	if got := idHead("é" + strings.Repeat("a", 37) + "ééé"); !utf8.ValidString(got) || !strings.HasSuffix(got, `"…`) {
		t.Errorf("idHead cut inside a character: %q", got)
	}
}
