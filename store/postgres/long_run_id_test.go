package postgres_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// TestLongRunIDIsAnInvalidID: a run id past btree's key limit (about
// 2.7 KB, docs/compatibility.md "PostgreSQL") is refused every time. The
// refusal is store.ErrInvalidID, an answer, so that a START_SUBWORKFLOW
// naming such a child fails instead of being retried as an outage
// (runtime.Start passes it on unwrapped).
func TestLongRunIDIsAnInvalidID(t *testing.T) {
	testURL(t)
	t.Parallel()
	s := openSchema(t, testSchema(t))
	b := make([]byte, 1600) // hex of random bytes: does not compress
	_, _ = rand.Read(b)
	r := testRun("long-" + hex.EncodeToString(b))
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true})
	if !errors.Is(err, store.ErrInvalidID) {
		t.Fatalf("creating a run with a %d-byte id: %.300v; want store.ErrInvalidID", len(r.RunID), err)
	}
	if r.Version != 0 {
		t.Errorf("the refused run's version moved to %d", r.Version)
	}
}
