package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// FuzzPostgresForeignCommands: another writer (a tool, a hand edit)
// appends a command row of its own to the shared inbox, at a seq after
// every stored one (possibly leaving a gap: gap's low 7 bits), either
// taking it from command_seq as the store's appenders do or (gap's high
// bit) choosing it itself without moving command_seq (commands copied in
// with their seqs), with arbitrary command_id, run_id, type, payload_json, ts_text,
// client_id and ts. Between two valid commands appended through the store
// it checks that:
//   - CommandListAfter from a cursor before them never fails, whatever
//     the page size, and a consumer paging by the returned cursor gets
//     each of the three exactly once, in seq order, the cursor advancing
//     strictly and ending at the last one (nothing in the postgres store is
//     skipped: every column is text, a payload that is not a JSON object
//     reads as {}, per Python's reader);
//   - the foreign command reads back as written: ids and type as the key
//     columns hold them, the payload as it decodes (or {}), ts_text kept;
//   - the valid commands read back unchanged (payload, ids);
//   - a store append reusing the foreign command's id (a trimmed, valid
//     one) is a duplicate with the foreign row's seq;
//   - CommandLastSeq is the last valid command's seq, and a cursor saved
//     at it loads back.
func FuzzPostgresForeignCommands(f *testing.F) {
	f.Add("c1", "run-1", "pause", `{"reason": "x"}`, "2026-11-29T22:47:00+00:00", "client", int64(0), uint8(0))
	f.Add("", "", "", "", "", "", int64(1796083200), uint8(3))
	f.Add(" c2 ", "r", "resume", `null`, "not a time", "", int64(-1), uint8(1))
	f.Add("c3", "r", "cancel", `[1, 2]`, "", "\x01", int64(0), uint8(0))
	f.Add("c4\x01\x02", "r\x01", "t", `{"a": {"b": [1, 2.5, "\u0000", "\ud800"]}, "n": NaN}`, "2026-13-01", "c", int64(5), uint8(255))
	f.Add("c5", "r", "t", `{torn`, "  ", " ", int64(0), uint8(0))
	f.Add("c6", "r", "t", `{"x": 1, "x": 2}`, "1700000000", "c", int64(0), uint8(0))
	f.Add("c7", "r", "t", `{}`, "", "", int64(0), uint8(0x80))
	f.Add("c8", "r", "t", `{}`, "", "", int64(0), uint8(0x83))

	setup := pfFuzzSetup(f)
	var n int
	f.Fuzz(func(t *testing.T, cmdID, runID, typ, payload, tsText, clientID string, tsSecs int64, gap uint8) {
		env := setup(t)
		st := env.st
		t.Cleanup(func() { env.wipe(t) })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n++
		cmdID, runID, typ, payload = pgText(cmdID), pgText(runID), pgText(typ), pgText(payload)
		tsText, clientID = pgText(tsText), pgText(clientID)
		prefix := fmt.Sprintf("valid-%d-", n)
		if strings.HasPrefix(cmdID, prefix) {
			t.Skip("the foreign id is one of the valid commands' ids")
		}

		// A valid command before the foreign one.
		before := &durable.CommandRecord{CommandID: prefix + "a", RunID: "r-valid", Type: "pause", Payload: map[string]any{"k": "é", "n": int64(1)}}
		if _, err := st.CommandAppend(ctx, before); err != nil {
			t.Fatalf("append before: %v", err)
		}
		// The foreign writer, in the store's protocol: lock the counter,
		// take a seq after it, move it on.
		var fseq int64
		err := pgx.BeginFunc(ctx, env.raw, func(tx pgx.Tx) error {
			var last int64
			if err := tx.QueryRow(ctx, `SELECT last_seq FROM `+env.table("command_seq")+` FOR UPDATE`).Scan(&last); err != nil {
				return err
			}
			ownSeq := gap&0x80 != 0
			if ownSeq {
				// A writer that picks its seq itself: after every
				// stored command, command_seq left as it is.
				if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM `+env.table("commands")).Scan(&last); err != nil {
					return err
				}
			}
			fseq = last + 1 + int64(gap&0x7f)
			var ts *time.Time
			if tsSecs != 0 {
				v := time.Unix(tsSecs%100_000_000_000, 0).UTC()
				ts = &v
			}
			var client, tsT *string
			if clientID != "" {
				client = &clientID
			}
			if tsText != "" {
				tsT = &tsText
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+env.table("commands")+` (seq, command_id, run_id, type, payload_json, ts, client_id, ts_text)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, fseq, cmdID, runID, typ, payload, ts, client, tsT); err != nil {
				return err
			}
			if ownSeq {
				return nil
			}
			_, err := tx.Exec(ctx, `UPDATE `+env.table("command_seq")+` SET last_seq = $1`, fseq)
			return err
		})
		if err != nil {
			t.Fatalf("foreign writer: %v", err)
		}
		after := &durable.CommandRecord{CommandID: prefix + "b", RunID: "r-valid", Type: "resume", Payload: map[string]any{"p": []any{"x"}}}
		if _, err := st.CommandAppend(ctx, after); err != nil {
			t.Fatalf("append after the foreign row: %v", err)
		}
		if !(before.Seq < fseq && fseq < after.Seq) {
			t.Fatalf("seqs %d, %d (foreign), %d are not in order", before.Seq, fseq, after.Seq)
		}
		wantSeqs := []int64{before.Seq, fseq, after.Seq}

		for _, limit := range []int{1, 2, 0} {
			cursor := before.Seq - 1
			var got []*durable.CommandRecord
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatalf("limit %d: paging did not end; cursor %d", limit, cursor)
				}
				page, next, err := st.CommandListAfter(ctx, cursor, limit)
				if err != nil {
					t.Fatalf("CommandListAfter(%d, %d) with a foreign row: %v", cursor, limit, err)
				}
				if len(page) == 0 {
					if next != cursor {
						t.Fatalf("empty page moved the cursor from %d to %d", cursor, next)
					}
					break
				}
				if next != page[len(page)-1].Seq || next <= cursor {
					t.Fatalf("page ends at seq %d, returned cursor %d (was %d)", page[len(page)-1].Seq, next, cursor)
				}
				got = append(got, page...)
				cursor = next
			}
			var seqs []int64
			for _, c := range got {
				seqs = append(seqs, c.Seq)
			}
			if fmt.Sprint(seqs) != fmt.Sprint(wantSeqs) {
				t.Fatalf("limit %d: consumer got seqs %v, want %v", limit, seqs, wantSeqs)
			}
			if cursor != after.Seq {
				t.Fatalf("limit %d: cursor ends at %d, want %d", limit, cursor, after.Seq)
			}
			for i, want := range []*durable.CommandRecord{before, after} {
				c := got[2*i]
				w, _ := pyjson.Marshal(want.Payload, pyjson.Line)
				g, _ := pyjson.Marshal(c.Payload, pyjson.Line)
				if c.CommandID != want.CommandID || c.RunID != want.RunID || c.Type != want.Type || !bytes.Equal(w, g) {
					t.Fatalf("valid command %s read as %+v", want.CommandID, c)
				}
			}
			fc := got[1]
			if fc.CommandID != postgres.KeyTextOf(cmdID) || fc.RunID != postgres.KeyTextOf(runID) || fc.Type != postgres.KeyTextOf(typ) || fc.ClientID != postgres.KeyTextOf(clientID) {
				t.Fatalf("foreign command read as id %q run %q type %q client %q; written %q %q %q %q",
					fc.CommandID, fc.RunID, fc.Type, fc.ClientID, cmdID, runID, typ, clientID)
			}
			var wantPayload []byte = []byte("{}")
			if m, err := pyjson.DecodeObject([]byte(payload)); err == nil {
				wantPayload, _ = pyjson.Marshal(m, pyjson.Line)
			}
			if g, err := pyjson.Marshal(fc.Payload, pyjson.Line); err != nil || !bytes.Equal(g, wantPayload) {
				t.Fatalf("foreign payload read as %s (%v), want %s\n%q", g, err, wantPayload, payload)
			}
			if tsText != "" && fc.TSText() != postgres.KeyTextOf(tsText) {
				t.Fatalf("foreign ts_text read as %q, want %q", fc.TSText(), tsText)
			}
			if tsText == "" && (tsSecs == 0) != fc.TS.IsZero() {
				t.Fatalf("foreign ts %v read as %v", tsSecs, fc.TS)
			}
		}

		// An append of the foreign command's id is a duplicate of it.
		if id := pyval.Strip(cmdID); id == cmdID && id != "" && !strings.ContainsRune(id, '\x01') {
			res, err := st.CommandAppend(ctx, &durable.CommandRecord{CommandID: id, RunID: "r-valid", Type: "pause"})
			if err != nil || !res.Duplicate || res.Seq != fseq {
				t.Fatalf("append of the foreign command's id %q = %+v, %v; want a duplicate of seq %d", id, res, err, fseq)
			}
		}
		if last, err := st.CommandLastSeq(ctx); err != nil || last != after.Seq {
			t.Fatalf("CommandLastSeq = %d, %v; want %d", last, err, after.Seq)
		}
		consumer := prefix + "consumer"
		if err := st.CursorSave(ctx, consumer, after.Seq); err != nil {
			t.Fatal(err)
		}
		if c, err := st.CursorLoad(ctx, consumer); err != nil || c != after.Seq {
			t.Fatalf("CursorLoad = %d, %v; want %d", c, err, after.Seq)
		}
	})
}
