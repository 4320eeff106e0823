package storetest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

var commandTests = []subtest{
	{"Append", testCommandAppend},
	{"Duplicate", testCommandDuplicate},
	{"IDsTrimmed", testCommandIDsTrimmed},
	{"ListAfter", testCommandListAfter},
	{"LastSeq", testCommandLastSeq},
	{"DeleteByRun", testCommandDeleteByRun},
	{"Validation", testCommandValidation},
	{"ConcurrentAppend", testCommandConcurrentAppend},
	{"NegativeLimit", testCommandNegativeLimit},
	{"Defaults", testCommandDefaults},
	{"Int64Bounds", testCommandInt64Bounds},
	{"TSTextAsGiven", testCommandTSText},
	{"TSTextInvalidUTF8", testCommandTSInvalidUTF8},
	{"SeqInPlace", testCommandSeqInPlace},
}

func newCommand(id, runID, typ string) *durable.CommandRecord {
	return &durable.CommandRecord{CommandID: id, RunID: runID, Type: typ,
		Payload: map[string]any{"reason": "because ✓", "n": json.Number("1.0"), "nested": map[string]any{"a": []any{"b"}}},
		TS:      at(time.Second), ClientID: "client-1"}
}

func appendCommand(t *testing.T, s store.Store, c *durable.CommandRecord) durable.CommandAppendResult {
	t.Helper()
	res, err := s.CommandAppend(t.Context(), c)
	if err != nil {
		t.Fatalf("CommandAppend(%s): %v", c.CommandID, err)
	}
	return res
}

func listCommands(t *testing.T, s store.Store, after int64, limit int) ([]*durable.CommandRecord, int64) {
	t.Helper()
	cs, next, err := s.CommandListAfter(t.Context(), after, limit)
	if err != nil {
		t.Fatalf("CommandListAfter: %v", err)
	}
	return cs, next
}

func commandSeqs(cs []*durable.CommandRecord) []int64 {
	out := []int64{}
	for _, c := range cs {
		out = append(out, c.Seq)
	}
	return out
}

func commandJSON(t *testing.T, c *durable.CommandRecord) string {
	t.Helper()
	b, err := pyjson.Marshal(c.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testCommandAppend(t *testing.T, s store.Store) {
	var cmds []*durable.CommandRecord
	for i, typ := range []string{"pause", "resume", "cancel"} {
		c := newCommand(fmt.Sprintf("cmd-%d", i), "run-1", typ)
		res := appendCommand(t, s, c)
		if want := (durable.CommandAppendResult{Accepted: true, Seq: int64(i + 1)}); res != want {
			t.Errorf("CommandAppend #%d = %+v, want %+v", i, res, want)
		}
		cmds = append(cmds, c)
	}
	// An empty command id gets a random one.
	anon := newCommand("", "run-1", "emit_event")
	if res := appendCommand(t, s, anon); !res.Accepted || res.Seq != 4 {
		t.Errorf("anonymous CommandAppend = %+v", res)
	}
	if anon.CommandID == "" {
		t.Errorf("CommandAppend left CommandID empty")
	}
	cmds = append(cmds, anon)
	got, next := listCommands(t, s, 0, 0)
	if next != 4 || len(got) != 4 {
		t.Fatalf("CommandListAfter(0) = %d commands, next %d", len(got), next)
	}
	for i, c := range got {
		want := *cmds[i]
		want.Seq = int64(i + 1)
		if g, w := commandJSON(t, c), commandJSON(t, &want); g != w {
			t.Errorf("command %d:\n got %s\nwant %s", i, g, w)
		}
	}
	// Stored commands are private copies.
	cmds[0].Payload["reason"] = "MUTATED"
	got[1].Payload["reason"] = "MUTATED"
	again, _ := listCommands(t, s, 0, 2)
	for _, c := range again {
		if c.Payload["reason"] != "because ✓" {
			t.Errorf("mutation leaked into stored command %d: %v", c.Seq, c.Payload)
		}
	}
}

func testCommandDuplicate(t *testing.T, s store.Store) {
	appendCommand(t, s, newCommand("a", "run-1", "pause"))
	appendCommand(t, s, newCommand("b", "run-1", "resume"))
	dup := newCommand("a", "run-2", "cancel")
	dup.Payload = map[string]any{"other": true}
	res := appendCommand(t, s, dup)
	if want := (durable.CommandAppendResult{Duplicate: true, Seq: 1}); res != want {
		t.Errorf("duplicate CommandAppend = %+v, want %+v", res, want)
	}
	if last, _ := s.CommandLastSeq(t.Context()); last != 2 {
		t.Errorf("CommandLastSeq after a duplicate = %d, want 2", last)
	}
	got, _ := listCommands(t, s, 0, 0)
	if len(got) != 2 || got[0].Type != "pause" || got[0].RunID != "run-1" || got[0].Payload["other"] != nil {
		t.Errorf("duplicate changed the stored command: %+v", got)
	}
}

// Every Python command store trims the ids: " c1 " and "c1" are one
// command, stored as "c1" for run "r1".
func testCommandIDsTrimmed(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: " c1 ", RunID: " r1 ", Type: " pause "}); err != nil {
		t.Fatal(err)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Duplicate || res.Seq != 1 {
		t.Errorf("append of \"c1\" after \" c1 \": %+v, want a duplicate of seq 1", res)
	}
	cmds, _, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].CommandID != "c1" || cmds[0].RunID != "r1" || cmds[0].Type != "pause" {
		t.Errorf("stored commands: %+v, want one (c1, r1, pause)", cmds)
	}
	if n, err := s.CommandDeleteByRun(ctx, " r1 "); err != nil || n != 1 {
		t.Errorf("CommandDeleteByRun(\" r1 \") = %d, %v; want 1", n, err)
	}
}

func testCommandListAfter(t *testing.T, s store.Store) {
	for i := range 5 {
		appendCommand(t, s, newCommand(fmt.Sprintf("c%d", i), "run-1", "pause"))
	}
	cases := []struct {
		after    int64
		limit    int
		want     []int64
		wantNext int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5}, 5},
		{0, 2, []int64{1, 2}, 2},
		{2, 2, []int64{3, 4}, 4},
		{4, 10, []int64{5}, 5},
		{5, 10, []int64{}, 5},
		{9, 10, []int64{}, 9},
	}
	for _, c := range cases {
		got, next := listCommands(t, s, c.after, c.limit)
		if g := commandSeqs(got); !slices.Equal(g, c.want) || next != c.wantNext {
			t.Errorf("CommandListAfter(%d, %d) = %v next %d, want %v next %d", c.after, c.limit, g, next, c.want, c.wantNext)
		}
	}
}

func testCommandLastSeq(t *testing.T, s store.Store) {
	if last, err := s.CommandLastSeq(t.Context()); err != nil || last != 0 {
		t.Errorf("CommandLastSeq on an empty store = %d, %v; want 0", last, err)
	}
	appendCommand(t, s, newCommand("a", "run-1", "pause"))
	appendCommand(t, s, newCommand("b", "run-1", "pause"))
	if last, err := s.CommandLastSeq(t.Context()); err != nil || last != 2 {
		t.Errorf("CommandLastSeq = %d, %v; want 2", last, err)
	}
}

func testCommandDeleteByRun(t *testing.T, s store.Store) {
	appendCommand(t, s, newCommand("a", "run-1", "pause"))  // 1
	appendCommand(t, s, newCommand("b", "run-2", "pause"))  // 2
	appendCommand(t, s, newCommand("c", "run-1", "resume")) // 3
	appendCommand(t, s, newCommand("d", "run-2", "resume")) // 4
	n, err := s.CommandDeleteByRun(t.Context(), "run-1")
	if err != nil || n != 2 {
		t.Fatalf("CommandDeleteByRun = %d, %v; want 2", n, err)
	}
	got, next := listCommands(t, s, 0, 0)
	if g := commandSeqs(got); !slices.Equal(g, []int64{2, 4}) || next != 4 {
		t.Errorf("commands after delete = %v next %d, want [2 4] next 4", g, next)
	}
	if n, err := s.CommandDeleteByRun(t.Context(), "run-1"); err != nil || n != 0 {
		t.Errorf("second CommandDeleteByRun = %d, %v; want 0", n, err)
	}
	// Deleting the newest command never lets a seq be issued twice: a
	// consumer whose cursor is 4 must see the next command.
	if n, _ := s.CommandDeleteByRun(t.Context(), "run-2"); n != 2 {
		t.Errorf("CommandDeleteByRun(run-2) = %d, want 2", n)
	}
	res := appendCommand(t, s, newCommand("e", "run-3", "pause"))
	if !res.Accepted || res.Seq <= 4 {
		t.Errorf("append after deleting the newest commands = %+v, want a seq above 4", res)
	}
	if got, _ := listCommands(t, s, 4, 0); len(got) != 1 || got[0].CommandID != "e" {
		t.Errorf("consumer at cursor 4 sees %v", commandSeqs(got))
	}
}

func testCommandValidation(t *testing.T, s store.Store) {
	for _, c := range []*durable.CommandRecord{
		{CommandID: "x", Type: "pause"},
		{CommandID: "y", RunID: "run-1"},
	} {
		if res, err := s.CommandAppend(t.Context(), c); err == nil {
			t.Errorf("CommandAppend(%+v) = %+v, want an error", c, res)
		}
	}
	if last, _ := s.CommandLastSeq(t.Context()); last != 0 {
		t.Errorf("refused commands were stored: last seq %d", last)
	}
}

func testCommandConcurrentAppend(t *testing.T, s store.Store) {
	const n = 16
	var wg sync.WaitGroup
	results := make([]durable.CommandAppendResult, 2*n)
	errs := make([]error, 2*n)
	for i := range 2 * n {
		wg.Go(func() {
			// Pairs of goroutines race on the same command id.
			c := newCommand(fmt.Sprintf("cmd-%d", i/2), "run-1", "pause")
			results[i], errs[i] = s.CommandAppend(t.Context(), c)
		})
	}
	wg.Wait()
	seqs := map[int64]bool{}
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("CommandAppend: %v", errs[i])
		}
		other := results[i^1]
		if res.Accepted == other.Accepted || res.Seq != other.Seq {
			t.Errorf("racing appends of one id: %+v and %+v, want one accepted with the same seq", res, other)
		}
		seqs[res.Seq] = true
	}
	if len(seqs) != n {
		t.Errorf("%d distinct seqs, want %d", len(seqs), n)
	}
	for seq := int64(1); seq <= n; seq++ {
		if !seqs[seq] {
			t.Errorf("seq %d missing", seq)
		}
	}
}

var cursorTests = []subtest{
	{"PerConsumer", testCursors},
	{"NonUTF8Consumers", testCursorsNonUTF8Consumers},
}

// testCursorsNonUTF8Consumers: consumer ids are compared byte for byte,
// also where they are not UTF-8 (a Go host builds them): two consumers
// differing only in such bytes keep a cursor each. PostgreSQL once stored
// both as one id (U+FFFD for the bad byte), so one consumer's save moved
// the other's cursor, which then skipped or re-read commands.
func testCursorsNonUTF8Consumers(t *testing.T, s store.Store) {
	ctx := t.Context()
	const a, b = "c-\xff", "c-\xfe"
	for c, n := range map[string]int64{a: 5, b: 9} {
		if err := s.CursorSave(ctx, c, n); err != nil {
			t.Fatalf("CursorSave(%q): %v", c, err)
		}
	}
	for c, want := range map[string]int64{a: 5, b: 9, "c-\uFFFD": 0} {
		if got, err := s.CursorLoad(ctx, c); err != nil || got != want {
			t.Errorf("CursorLoad(%q) = %d, %v; want %d", c, got, err, want)
		}
	}
}

func testCursors(t *testing.T, s store.Store) {
	load := func(consumer string) int64 {
		t.Helper()
		c, err := s.CursorLoad(t.Context(), consumer)
		if err != nil {
			t.Fatalf("CursorLoad(%s): %v", consumer, err)
		}
		return c
	}
	save := func(consumer string, c int64) {
		t.Helper()
		if err := s.CursorSave(t.Context(), consumer, c); err != nil {
			t.Fatalf("CursorSave(%s): %v", consumer, err)
		}
	}
	if c := load(store.DefaultConsumer); c != 0 {
		t.Errorf("unsaved cursor = %d, want 0", c)
	}
	save(store.DefaultConsumer, 5)
	save("worker-2", 7)
	if c := load(store.DefaultConsumer); c != 5 {
		t.Errorf("default cursor = %d, want 5", c)
	}
	if c := load("worker-2"); c != 7 {
		t.Errorf("worker-2 cursor = %d, want 7", c)
	}
	save(store.DefaultConsumer, 9)
	if c := load(store.DefaultConsumer); c != 9 {
		t.Errorf("overwritten cursor = %d, want 9", c)
	}
	if c := load("worker-2"); c != 7 {
		t.Errorf("worker-2 cursor changed to %d", c)
	}
	if c := load("worker-3"); c != 0 {
		t.Errorf("unknown consumer cursor = %d, want 0", c)
	}
}

// testCommandInt64Bounds: list_after lists the commands whose seq is
// greater than after (spec §4.5), on every backend alike at the ends of
// the int64 range: none after math.MaxInt64, the cursor staying there
// (computing after+1 instead wraps to math.MinInt64 and lists them all),
// and all after math.MinInt64. A cursor saved at either bound loads back
// as it was, so a consumer parked past every seq stays there.
func testCommandInt64Bounds(t *testing.T, s store.Store) {
	for i := range 3 {
		appendCommand(t, s, newCommand(fmt.Sprintf("c%d", i), "run-1", "pause"))
	}
	for _, c := range []struct {
		after    int64
		want     []int64
		wantNext int64
	}{
		{math.MaxInt64, []int64{}, math.MaxInt64},
		{math.MaxInt64 - 1, []int64{}, math.MaxInt64 - 1},
		{math.MinInt64, []int64{1, 2, 3}, 3},
		{-1, []int64{1, 2, 3}, 3},
	} {
		got, next := listCommands(t, s, c.after, 10)
		if g := commandSeqs(got); !slices.Equal(g, c.want) || next != c.wantNext {
			t.Errorf("CommandListAfter(%d, 10) = %v next %d, want %v next %d", c.after, g, next, c.want, c.wantNext)
		}
	}
	for _, cursor := range []int64{math.MaxInt64, math.MinInt64} {
		if err := s.CursorSave(t.Context(), store.DefaultConsumer, cursor); err != nil {
			t.Fatalf("CursorSave(%d): %v", cursor, err)
		}
		if got, err := s.CursorLoad(t.Context(), store.DefaultConsumer); err != nil || got != cursor {
			t.Errorf("CursorLoad after CursorSave(%d) = %d, %v", cursor, got, err)
		}
	}
}
