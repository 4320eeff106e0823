package storetest

import (
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// testCommandSeqInPlace: CommandAppend fills the record it is given in
// place, its seq too (as it fills an empty command_id and ts): an
// accepted command carries the seq the result reports; a duplicate
// leaves the caller's record without one, the original keeps it. A store
// that forgot the record's seq would leave a caller reading c.Seq at 0.
func testCommandSeqInPlace(t *testing.T, s store.Store) {
	first := newCommand("cmd-seq", "run-1", "pause")
	res := appendCommand(t, s, first)
	if first.Seq != res.Seq || first.Seq == 0 {
		t.Errorf("accepted command: record seq %d, result seq %d; want them equal and set", first.Seq, res.Seq)
	}
	dup := newCommand("cmd-seq", "run-1", "pause")
	if res := appendCommand(t, s, dup); !res.Duplicate || dup.Seq != 0 {
		t.Errorf("duplicate: result %+v, record seq %d; want a duplicate and the record's seq left 0", res, dup.Seq)
	}
}
