package jsonfile

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// fzCmdLine is a command line as Python's JsonlCommandStore writes it.
func fzCmdLine(id string, seq int) string {
	return fmt.Sprintf(`{"command_id": %q, "run_id": "A", "type": "pause", "payload": {"reason": "r%d"}, `+
		`"ts": "2026-01-01T09:00:00+00:00", "client_id": null, "seq": %d}`+"\n", id, seq, seq)
}

func fzCommandKeys(t *testing.T, s *Store) []string {
	t.Helper()
	recs, _, err := s.CommandListAfter(t.Context(), 0, 100000)
	if err != nil {
		t.Fatalf("CommandListAfter: %v", err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d|%s|%s|%s|%v", r.Seq, r.CommandID, r.RunID, r.Type, r.Payload)
	}
	return out
}

// FuzzCommandsFile writes nPrefix valid Python command lines (seq 1..n)
// followed by arbitrary bytes as commands.jsonl, opens the store and
// reads the inbox. Properties: each valid command before the damage is
// listed with its seq and payload; the listing is in seq order, and
// paging from any listed seq gives the rest; CommandLastSeq is at least
// every seq listed; a new command gets a seq past all of them (or, when
// none is left, an error naming the seq) and a re-append of a valid one is
// a duplicate with its seq; after the append and a reopen, what was listed
// is still listed, plus the new command.
func FuzzCommandsFile(f *testing.F) {
	f.Add(uint8(0), []byte(""))
	f.Add(uint8(2), []byte(`{"command_id": "torn", "run_id": "A", "ty`))
	f.Add(uint8(1), []byte(fzCmdLine("x", 7)))
	f.Add(uint8(1), []byte(fzCmdLine("c0", 5)+fzCmdLine("y", 1)))
	f.Add(uint8(3), []byte(`{"command_id": "z", "run_id": "A", "type": "resume", "payload": {}, "ts": 12, "seq": 2.0}`+"\n"))
	f.Add(uint8(1), []byte(`{"command_id": "big", "run_id": "A", "type": "pause", "payload": {}, "ts": null, "seq": 9223372036854775807}`))
	f.Add(uint8(1), []byte(`{"seq": 1e400}`+"\n[]\n"+`{"command_id": "w", "run_id": "A", "type": "pause", "payload": {}, "seq": -3}`))
	f.Add(uint8(2), []byte("{\"torn"+strings.TrimSuffix(fzCmdLine("q", 4), "\n")))
	f.Fuzz(func(t *testing.T, nPrefix uint8, tail []byte) {
		n := int(nPrefix % 4)
		var file bytes.Buffer
		for i := range n {
			file.WriteString(fzCmdLine(fmt.Sprintf("c%d", i), i+1))
		}
		file.Write(tail)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "commands.jsonl"), file.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		s := openInternal(t, dir)
		ctx := t.Context()
		recs, _, err := s.CommandListAfter(ctx, 0, 100000)
		if err != nil {
			t.Fatalf("CommandListAfter: %v", err)
		}
		found := map[string]*durable.CommandRecord{}
		for i, r := range recs {
			if i > 0 && r.Seq < recs[i-1].Seq {
				t.Fatalf("commands out of seq order: %d after %d", r.Seq, recs[i-1].Seq)
			}
			if r.Seq <= 0 {
				t.Fatalf("command %q listed with seq %d", r.CommandID, r.Seq)
			}
			if found[r.CommandID] != nil {
				t.Fatalf("command %q listed twice", r.CommandID)
			}
			found[r.CommandID] = r
		}
		for i := range n {
			r := found[fmt.Sprintf("c%d", i)]
			if r == nil || r.Seq != int64(i+1) || r.Payload["reason"] != fmt.Sprintf("r%d", i+1) {
				t.Fatalf("valid command c%d (seq %d) listed as %+v", i, i+1, r)
			}
		}
		top, err := s.CommandLastSeq(ctx)
		if err != nil {
			t.Fatalf("CommandLastSeq: %v", err)
		}
		if len(recs) > 0 && top != recs[len(recs)-1].Seq || len(recs) == 0 && top != 0 {
			t.Fatalf("CommandLastSeq = %d, not the highest listed seq", top)
		}
		last := fzCounter(s) // the seq last given out or seen (file, cursors)
		if last < top {
			t.Fatalf("command counter %d below the highest listed seq %d", last, top)
		}
		before := fzCommandKeys(t, s)
		// Paging from each listed seq lists what comes after it.
		for i, r := range recs {
			page, next, err := s.CommandListAfter(ctx, r.Seq, 1)
			if err != nil {
				t.Fatal(err)
			}
			j := i + 1
			for j < len(recs) && recs[j].Seq == r.Seq {
				j++ // equal seqs (a foreign writer's duplicate seq) are not after it
			}
			switch {
			case j == len(recs) && len(page) != 0:
				t.Fatalf("page after the last seq %d holds %q", r.Seq, page[0].CommandID)
			case j < len(recs) && (len(page) != 1 || page[0].CommandID != recs[j].CommandID || next != recs[j].Seq):
				t.Fatalf("page after seq %d = %v (next %d), want %q", r.Seq, page, next, recs[j].CommandID)
			}
		}
		if n > 0 {
			res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c0", RunID: "A", Type: "pause"})
			if err != nil || !res.Duplicate || res.Seq != 1 {
				t.Fatalf("re-append of c0 = %+v, %v; want a duplicate at seq 1", res, err)
			}
		}
		res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "znew", RunID: "A", Type: "resume", Payload: map[string]any{"k": "v"}})
		if last == math.MaxInt64 {
			if err == nil || !strings.Contains(err.Error(), "9223372036854775807") {
				t.Fatalf("append with no seq left = %+v, %v; want an error naming the seq", res, err)
			}
			return
		}
		if found["znew"] != nil {
			if err != nil || !res.Duplicate {
				t.Fatalf("append of a listed id = %+v, %v; want a duplicate", res, err)
			}
			return
		}
		if err != nil || !res.Accepted || res.Seq != last+1 {
			t.Fatalf("CommandAppend = %+v, %v; want accepted at seq %d", res, err, last+1)
		}
		afterAppend := fzCommandKeys(t, s)
		want := append(append([]string(nil), before...), fmt.Sprintf("%d|znew|A|resume|map[k:v]", last+1))
		if fmt.Sprint(afterAppend) != fmt.Sprint(want) {
			t.Fatalf("after the append the inbox lists\n%q\nwant\n%q", afterAppend, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2 := openInternal(t, dir)
		if again := fzCommandKeys(t, s2); fmt.Sprint(again) != fmt.Sprint(want) {
			t.Fatalf("after a reopen the inbox lists\n%q\nwant\n%q", again, want)
		}
		if l2, err := s2.CommandLastSeq(ctx); err != nil || l2 != last+1 {
			t.Fatalf("CommandLastSeq after reopen = %d, %v; want %d", l2, err, last+1)
		}
	})
}

// FuzzCursorFile writes arbitrary bytes as commands_cursor.json (the
// default consumer's cursor, as Python's cursor store leaves it) and opens
// the store. Properties: CursorLoad never fails; the command counter is
// at or past the cursor read, so a new command is given a seq past it (or
// refused with an error naming the seq when none is left); CursorSave
// then CursorLoad gives the saved value, also after a reopen, and the
// command appended before is still listed.
func FuzzCursorFile(f *testing.F) {
	for _, s := range []string{
		"{\n  \"cursor\": 3,\n  \"updated_at\": \"2026-12-02T10:00:00+00:00\"\n}",
		`{"cursor": "12"}`, `{"cursor": " +1_2 "}`, `{"cursor": true}`, `{"cursor": null}`,
		`{"cursor": 2.0}`, `{"cursor": 1e400}`, `{"cursor": -5}`, `{"cursor": 9223372036854775807}`,
		`{"cursor": 99999999999999999999}`, `{"cursor": NaN}`, `{"cursor": [1]}`, `{"cursor": 3`, "", "[]", `{"cursor": "0x10"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "commands_cursor.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := openInternal(t, dir)
		ctx := t.Context()
		cur, err := s.CursorLoad(ctx, store.DefaultConsumer)
		if err != nil {
			t.Fatalf("CursorLoad: %v", err)
		}
		last := fzCounter(s)
		if last < cur {
			t.Fatalf("command counter %d is below the saved cursor %d: a new command would be given a seq the consumer has passed", last, cur)
		}
		res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "A", Type: "pause"})
		switch {
		case last == math.MaxInt64:
			if err == nil || !strings.Contains(err.Error(), "9223372036854775807") {
				t.Fatalf("append with no seq left = %+v, %v; want an error naming the seq", res, err)
			}
		case err != nil || res.Seq <= cur || res.Seq <= 0:
			t.Fatalf("CommandAppend = %+v, %v; want a seq past the cursor %d", res, err, cur)
		}
		if err := s.CursorSave(ctx, store.DefaultConsumer, 5); err != nil {
			t.Fatalf("CursorSave: %v", err)
		}
		if got, err := s.CursorLoad(ctx, store.DefaultConsumer); err != nil || got != 5 {
			t.Fatalf("CursorLoad after save = %d, %v; want 5", got, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2 := openInternal(t, dir)
		if got, err := s2.CursorLoad(ctx, store.DefaultConsumer); err != nil || got != 5 {
			t.Fatalf("CursorLoad after reopen = %d, %v; want 5", got, err)
		}
		if last != math.MaxInt64 {
			recs, _, err := s2.CommandListAfter(ctx, 0, 0)
			if err != nil || len(recs) != 1 || recs[0].CommandID != "c1" || recs[0].Seq != res.Seq {
				t.Fatalf("after reopen the inbox lists %v, %v; want c1 at seq %d", recs, err, res.Seq)
			}
		}
	})
}

// fzCounter is the store's command counter: the last seq given out, read
// in the file or in a saved cursor.
func fzCounter(s *Store) int64 {
	s.cmd.mu.Lock()
	defer s.cmd.mu.Unlock()
	return s.cmd.lastSeq
}
