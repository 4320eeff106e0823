package storetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// TestOverlongUnknownIDIsAbsentOnEveryStore: an id no run can have (too
// long for a file name on the JSON-file store, whose create refuses it) is
// unknown on every store: RunGet is ErrNotFound, RunDelete false, the
// ledger empty — not the file system's "file name too long". The runtime
// reads ids it did not create this way (a run's parent on every tick).
func TestOverlongUnknownIDIsAbsentOnEveryStore(t *testing.T) {
	ctx := context.Background()
	bs := diffBackends(t)
	for _, n := range []int{250, 300, 3000} {
		id := strings.Repeat("y", n)
		for _, b := range bs {
			s := b.st
			if _, err := s.RunGet(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: RunGet(unknown %d-byte id) = %v, want store.ErrNotFound", b.name, n, short(err))
			}
			if ok, err := s.RunDelete(ctx, id); ok || err != nil {
				t.Errorf("%s: RunDelete(unknown %d-byte id) = %v, %v; want false, nil", b.name, n, ok, short(err))
			}
			if c, err := s.LedgerCount(ctx, id); c != 0 || err != nil {
				t.Errorf("%s: LedgerCount(unknown %d-byte id) = %d, %v; want 0, nil", b.name, n, c, short(err))
			}
			if l, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id}); len(l) != 0 || err != nil {
				t.Errorf("%s: LedgerList(unknown %d-byte id) = %d records, %v; want none, nil", b.name, n, len(l), short(err))
			}
		}
	}
}

// short cuts the file names out of an error's text.
func short(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	for strings.Contains(s, "yyyyyyyy") {
		s = strings.ReplaceAll(s, "yyyyyyyy", "y")
	}
	return s
}
