package postgres_test

import (
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestCommandAppendRefusedWhenNoSeqIsLeft: with command_seq.last_seq at
// the largest bigint (set by hand, or by a restore that carried a seq
// there), an append has no seq above every issued one. It must fail,
// saying so, rather than store the command at last_seq+1, which wraps to
// math.MinInt64 in Go: a seq below every consumer's cursor, so the
// command would be accepted and never read. A duplicate of a stored
// command is still answered with its seq.
func TestCommandAppendRefusedWhenNoSeqIsLeft(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := testSchema(t)
	s := openSchema(t, schema)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	if _, err := plainConn(t).Exec(ctx, `UPDATE `+pgx.Identifier{schema, "command_seq"}.Sanitize()+` SET last_seq = $1`,
		int64(math.MaxInt64)); err != nil {
		t.Fatal(err)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "cancel"})
	if err == nil || !strings.Contains(err.Error(), "no seq left") {
		t.Fatalf("CommandAppend with last_seq at MaxInt64 = %+v, %v; want an error saying no seq is left", res, err)
	}
	got, _, err := s.CommandListAfter(ctx, math.MinInt64, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].CommandID != "c1" {
		t.Errorf("commands after the refused append = %d (want c1 alone)", len(got))
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil || !res.Duplicate || res.Seq != 1 {
		t.Errorf("CommandAppend(c1) again = %+v, %v; want a duplicate at seq 1", res, err)
	}
}
