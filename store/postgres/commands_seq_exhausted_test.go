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
	setLastCommandSeq(t, schema, int64(math.MaxInt64))
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

// TestCommandAppendTakesTheLastSeq: with command_seq.last_seq one below
// the largest bigint, one seq is still left, and an append takes it:
// only an append that would have to go past math.MaxInt64 is refused.
// The next append then is.
func TestCommandAppendTakesTheLastSeq(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := testSchema(t)
	s := openSchema(t, schema)
	setLastCommandSeq(t, schema, int64(math.MaxInt64-1))
	c := &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}
	res, err := s.CommandAppend(ctx, c)
	if err != nil || !res.Accepted || res.Seq != math.MaxInt64 || c.Seq != math.MaxInt64 {
		t.Fatalf("CommandAppend with last_seq at MaxInt64-1 = %+v (c.Seq %d), %v; want it accepted at seq MaxInt64", res, c.Seq, err)
	}
	if last, err := s.CommandLastSeq(ctx); err != nil || last != math.MaxInt64 {
		t.Errorf("CommandLastSeq = %d, %v; want MaxInt64", last, err)
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "cancel"}); err == nil ||
		!strings.Contains(err.Error(), "no seq left") {
		t.Errorf("CommandAppend after seq MaxInt64 was taken = %+v, %v; want an error saying no seq is left", res, err)
	}
}

// TestCommandLastSeqIsTheHighestStoredSeq: a command another writer
// inserted with a seq of its own (a copy tool, a hand repair) does not
// move command_seq, yet it is the highest seq: CommandLastSeq reports it,
// as a consumer starting from the last seq must not read it again, and
// the next append takes the seq after it.
func TestCommandLastSeqIsTheHighestStoredSeq(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := testSchema(t)
	s := openSchema(t, schema)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	if _, err := plainConn(t).Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "commands"}.Sanitize()+
		` (seq, command_id, run_id, type, payload_json) VALUES (10, 'c10', 'r1', 'resume', '{}')`); err != nil {
		t.Fatal(err)
	}
	if last, err := s.CommandLastSeq(ctx); err != nil || last != 10 {
		t.Errorf("CommandLastSeq = %d, %v; want 10 (the seq of the command inserted by hand)", last, err)
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c11", RunID: "r1", Type: "pause"}); err != nil || res.Seq != 11 {
		t.Errorf("CommandAppend after it = %+v, %v; want seq 11", res, err)
	}
}

// setLastCommandSeq sets command_seq.last_seq of schema by hand, as a
// restore or a repair may leave it.
func setLastCommandSeq(t *testing.T, schema string, last int64) {
	t.Helper()
	if _, err := plainConn(t).Exec(t.Context(), `UPDATE `+pgx.Identifier{schema, "command_seq"}.Sanitize()+` SET last_seq = $1`, last); err != nil {
		t.Fatal(err)
	}
}
