package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// CommandAppend writes the seq of an accepted command back to c (its doc:
// the id and TS it fills are "written back to c, with the seq"); a
// duplicate leaves c's seq alone.
func TestCommandAppendWritesSeqBackToAcceptedCommand(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
	for i, id := range []string{"c1", "c2"} {
		c := &durable.CommandRecord{CommandID: id, RunID: "run-1", Type: "pause"}
		res, err := s.CommandAppend(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Accepted || res.Seq != int64(i+1) || c.Seq != res.Seq {
			t.Errorf("CommandAppend(%s) = %+v, c.Seq = %d; want accepted at seq %d, written back to c", id, res, c.Seq, i+1)
		}
	}
	anon := &durable.CommandRecord{RunID: "run-1", Type: "resume"}
	if res, err := s.CommandAppend(ctx, anon); err != nil || anon.Seq != 3 || res.Seq != 3 {
		t.Errorf("CommandAppend(anonymous) = %+v, %v; c.Seq = %d, want 3", res, err, anon.Seq)
	}
	dup := &durable.CommandRecord{CommandID: "c1", RunID: "run-1", Type: "pause"}
	if res, err := s.CommandAppend(ctx, dup); err != nil || !res.Duplicate || res.Seq != 1 || dup.Seq != 0 {
		t.Errorf("duplicate CommandAppend = %+v, %v; c.Seq = %d, want a duplicate of seq 1 leaving c.Seq 0", res, err, dup.Seq)
	}
}

// A command whose payload_json is null, not an object or not JSON (a hand
// edit) reads with the payload {}, as Python's reader has it, instead of
// failing every listing of its page.
func TestCommandWithBadPayloadReadsAsEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.sqlite3")
	st := openStore(t, Config{Path: path, Shared: true})
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := st.CommandAppend(ctx, &durable.CommandRecord{CommandID: id, RunID: "r", Type: "pause", Payload: map[string]any{"k": id}}); err != nil {
			t.Fatal(err)
		}
	}
	db := openRawDB(t, path)
	defer db.Close()
	for id, bad := range map[string]string{"a": "null", "b": "[1, 2]", "c": "{torn"} {
		if _, err := db.ExecContext(ctx, `UPDATE commands SET payload_json = ? WHERE command_id = ?`, bad, id); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := st.CommandListAfter(ctx, 0, 10)
	if err != nil {
		t.Fatalf("listing commands with bad payloads: %v", err)
	}
	if len(got) != 4 {
		t.Fatalf("listed %d commands, want 4", len(got))
	}
	for _, c := range got {
		want := 0
		if c.CommandID == "d" {
			want = 1
		}
		if c.Payload == nil || len(c.Payload) != want {
			t.Errorf("command %s payload = %v", c.CommandID, c.Payload)
		}
	}
}

// CommandListAfter with no limit (limit <= 0) returns a page of 1000
// commands, as its doc says: a smaller default would make a consumer's
// loop poll more often, a larger one (or none) read a whole backlog into
// memory at once.
func TestCommandListAfterWithoutLimitReturns1000(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
	for range 1001 {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "run-1", Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, limit := range []int{0, -1} {
		out, next, err := s.CommandListAfter(ctx, 0, limit)
		if err != nil || len(out) != 1000 || next != 1000 {
			t.Errorf("CommandListAfter(0, %d) = %d commands, next %d, %v; want 1000, next 1000", limit, len(out), next, err)
		}
	}
}
