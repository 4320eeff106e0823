package storetest_test

// FuzzDecoratedRoundTrip: values built from fuzzed JSON (or fuzzed bytes
// taken as a string) committed through the decorator stacks the product
// allows (offload outside the hash chain, observe anywhere), over the
// in-memory store, over SQLite and (sel bit 0x20, when TEST_POSTGRES_URL
// names a server) over PostgreSQL, read back.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// fuzzOrders are the stacking orders of TestDecoratedOrders: offload is
// always outside the hash chain.
var fuzzOrders = []struct {
	name string
	mk   func(b store.Store, a artifact.Store, limit int) (store.Store, *observe.Store)
}{
	{"obs>off>hc", func(b store.Store, a artifact.Store, limit int) (store.Store, *observe.Store) {
		o := observe.Wrap(offload.Wrap(hashchain.Wrap(b), a, offload.Config{MaxInlineBytes: limit}))
		return o, o
	}},
	{"off>obs>hc", func(b store.Store, a artifact.Store, limit int) (store.Store, *observe.Store) {
		o := observe.Wrap(hashchain.Wrap(b))
		return offload.Wrap(o, a, offload.Config{MaxInlineBytes: limit}), o
	}},
	{"off>hc>obs", func(b store.Store, a artifact.Store, limit int) (store.Store, *observe.Store) {
		o := observe.Wrap(b)
		return offload.Wrap(hashchain.Wrap(o), a, offload.Config{MaxInlineBytes: limit}), o
	}},
	{"obs>off>obs>hc", func(b store.Store, a artifact.Store, limit int) (store.Store, *observe.Store) {
		o := observe.Wrap(offload.Wrap(observe.Wrap(hashchain.Wrap(b)), a, offload.Config{MaxInlineBytes: limit}))
		return o, o
	}},
}

func fzCanon(v any) string {
	b, err := pyjson.Marshal(v, pyjson.Canonical)
	if err != nil {
		return "ENCODE ERROR: " + err.Error()
	}
	return string(b)
}

// fzExact returns a string of exactly n bytes made of pad repeated (cut
// at a byte: it may end inside a UTF-8 sequence).
func fzExact(pad string, n int) string {
	if pad == "" {
		pad = "x"
	}
	s := strings.Repeat(pad, n/len(pad)+1)
	return s[:n]
}

func fzRec(runID, step string, eff *durable.Effect, result any) *durable.StepRecord {
	now := durable.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	return &durable.StepRecord{RunID: runID, StepID: step, NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now, Attempt: 1, Effect: eff, Result: result}
}

// fzWrite writes the fuzzed values to st as run runID: a create with two
// records, an append of one, a terminal commit with one more. It returns
// the records and the run it gave to st.
func fzWrite(ctx context.Context, st store.Store, runID string, v any, pad string, limit int) ([]*durable.StepRecord, *durable.RunState, error) {
	at, over := fzExact(pad, limit), fzExact(pad, limit+1)
	fakeID := artifact.ComputeID("fuzz-not-this-run", []byte(pad))
	r0 := fzRec(runID, "s0", &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"v": v, "k.dot": at}}, v)
	r0.IdempotencyKey = "k0"
	r1 := fzRec(runID, "s1", nil, map[string]any{
		"wrap": v, "edge": over,
		"fake":  map[string]any{artifact.RefKey: fakeID},
		"fake2": map[string]any{artifact.RefKey: fakeID, "x": over},
		"fake3": map[string]any{artifact.RefKey: "../" + pad},
		"fake4": map[string]any{artifact.RefKey: json.Number("12")},
	})
	r2 := fzRec(runID, "s2", &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{"edge": over, "l": []any{v, at}}}, []any{v, at, over})
	r3 := fzRec(runID, "s3", nil, v)
	r3.IdempotencyKey = "k3"
	run := &durable.RunState{RunID: runID, WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{"pub": v, "_temp": map[string]any{"big": v, "edge": over}}}
	if err := st.RunCommit(ctx, &store.CommitParams{Create: true, Run: run, Records: []*durable.StepRecord{r0, r1}}); err != nil {
		return nil, nil, fmt.Errorf("create: %w", err)
	}
	if err := st.LedgerAppend(ctx, runID, []*durable.StepRecord{r2}); err != nil {
		return nil, nil, fmt.Errorf("append: %w", err)
	}
	run.Status = durable.RunCompleted
	run.Vars["_temp"] = map[string]any{"big": v, "edge": over, "k.dot": at, "l": []any{v}}
	run.Vars["_runtime"] = map[string]any{"x": v, "memory_spans": []any{over}}
	run.Output = map[string]any{"o": v, "edge": over}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{r3}}); err != nil {
		return nil, nil, fmt.Errorf("final commit: %w", err)
	}
	return []*durable.StepRecord{r0, r1, r2, r3}, run, nil
}

type fzSQLite struct {
	once sync.Once
	st   store.Store
	err  error
}

func FuzzDecoratedRoundTrip(f *testing.F) {
	f.Add([]byte(`{"a":"`+strings.Repeat("x", 300)+`","b":[1,2.5,-0.0,1e400]}`), "y", uint16(120), uint8(0x10))
	f.Add([]byte(`"short"`), "é", uint16(5), uint8(1))
	f.Add([]byte(`{"$artifact":"0123456789abcdef0123456789abcdef"}`), "ab", uint16(20), uint8(0x12))
	f.Add([]byte(`{"$artifact":"x","big":"`+strings.Repeat("z", 200)+`"}`), "😀", uint16(40), uint8(3))
	f.Add([]byte(`[[[[[[[[[[{"k.dot":{"":null}}]]]]]]]]]]`), "q", uint16(10), uint8(4))
	f.Add([]byte(`{"i":9223372036854775807,"j":-9223372036854775809,"f":1.7976931348623157e308,"t":5e-324,"n":1.50}`), "\xff\xfe", uint16(30), uint8(0x15))
	f.Add([]byte("\xff\xfe\xfd not json but long enough to offload"), "\xc3", uint16(8), uint8(6))
	f.Add([]byte(`{"u":"\u2028\ud83d\ude00\u0000"}`), "\u2028", uint16(3), uint8(0x17))
	f.Add([]byte(`{"a":"`+strings.Repeat("p", 120)+`","n":[1,-0.0,1e400,"\u0000"]}`), "pg", uint16(60), uint8(0x21))
	f.Add([]byte(`{"$artifact":"0123456789abcdef0123456789abcdef","k":"\ud800"}`), "é", uint16(12), uint8(0x22))
	var sq, pg fzSQLite
	dir := f.TempDir()
	pgURL := os.Getenv("TEST_POSTGRES_URL")
	pgSchema := fmt.Sprintf("agw_fzdeco_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	f.Cleanup(func() {
		if sq.st != nil {
			_ = sq.st.Close()
		}
		if pg.st != nil {
			pg.st.Close()
			_ = postgres.DropSchema(context.Background(), pgURL, pgSchema)
		}
	})
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, doc []byte, pad string, limitSel uint16, sel uint8) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("one write and read back took %v (doc %d bytes, limit sel %d, sel %#x)", d, len(doc), limitSel, sel)
			}
		}()
		var v any
		if d, err := pyjson.Decode(doc); err == nil {
			v = d
		} else {
			v = string(doc)
		}
		if len(pad) > 64 {
			pad = pad[:64]
		}
		limit := 1 + int(limitSel%700)
		order := fuzzOrders[int(sel)%len(fuzzOrders)]
		useSQLite := sel&0x10 != 0
		usePostgres := sel&0x20 != 0 && pgURL != ""
		i := n.Add(1)
		rid, pid := fmt.Sprintf("d%d", i), fmt.Sprintf("p%d", i)
		var backend, plain store.Store
		if usePostgres {
			pg.once.Do(func() {
				pg.st, pg.err = postgres.New(context.Background(), postgres.Config{URL: pgURL, Schema: pgSchema, MaxConns: 2})
			})
			if pg.err != nil {
				t.Fatal(pg.err)
			}
			backend, plain = pg.st, pg.st
		} else if useSQLite {
			sq.once.Do(func() {
				sq.st, sq.err = sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(dir, "db.sqlite3")})
			})
			if sq.err != nil {
				t.Fatal(sq.err)
			}
			backend, plain = sq.st, sq.st
		} else {
			backend, plain = memory.New(), memory.New()
		}
		arts := artifact.NewMemory()
		st, obs := order.mk(backend, arts, limit)
		sub := obs.Subscribe(rid, 64)
		defer sub.Cancel()

		before := fzCanon(v)
		recs, run, err := fzWrite(ctx, st, rid, v, pad, limit)
		if err != nil {
			// The undecorated store must refuse it too, and the error
			// must say something.
			_, _, perr := fzWrite(ctx, plain, pid, pyjson.Clone(v), pad, limit)
			if perr == nil {
				t.Fatalf("%s: decorated write failed (%v) where the plain store's succeeded", order.name, err)
			}
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		precs, prun, err := fzWrite(ctx, plain, pid, pyjson.Clone(v), pad, limit)
		if err != nil {
			t.Fatalf("plain write failed where the decorated one succeeded: %v", err)
		}
		_ = precs
		_ = prun

		// The caller's values are unchanged; its bookkeeping is the store's.
		if got := fzCanon(v); got != before {
			t.Fatalf("the write changed the caller's value:\nbefore %s\nafter  %s", before, got)
		}
		if run.Version != 2 {
			t.Errorf("run version %d, want 2", run.Version)
		}
		for i, r := range recs {
			if r.Seq != int64(i+1) {
				t.Errorf("caller's record %d has seq %d", i, r.Seq)
			}
		}

		// The chain verifies over the stored records.
		stored, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: rid})
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != 4 {
			t.Fatalf("%d records stored, want 4", len(stored))
		}
		for i, r := range stored {
			if r.Seq != int64(i+1) {
				t.Errorf("stored record %d has seq %d", i, r.Seq)
			}
		}
		if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
			b, _ := json.Marshal(rep)
			t.Errorf("%s: chain does not verify: %s", order.name, b)
		}
		// The caller's records carry the hashes stored (copied back).
		for i := range stored {
			if recs[i].RecordHash != stored[i].RecordHash || recs[i].PrevHash != stored[i].PrevHash {
				t.Errorf("%s: record %d: caller has hash %q prev %q, stored %q prev %q", order.name, i,
					recs[i].RecordHash, recs[i].PrevHash, stored[i].RecordHash, stored[i].PrevHash)
			}
		}

		// The observer got exactly the stored records, in order.
		var got []*durable.StepRecord
	drain:
		for {
			select {
			case ev := <-sub.C:
				if ev.RunID != rid || ev.Deleted {
					t.Errorf("unexpected event %+v", ev)
				}
				got = append(got, ev.Records...)
			default:
				break drain
			}
		}
		if sub.Lagged() {
			t.Errorf("subscription lagged")
		}
		if len(got) != len(stored) {
			t.Fatalf("%s: observer got %d records, %d stored", order.name, len(got), len(stored))
		}
		for i := range stored {
			a, _ := durable.MarshalRecord(stored[i], pyjson.Line)
			b, _ := durable.MarshalRecord(got[i], pyjson.Line)
			if string(a) != string(b) || got[i].Seq != stored[i].Seq {
				t.Errorf("%s: notified record %d (seq %d) differs from stored (seq %d):\n%s\n%s", order.name, i, got[i].Seq, stored[i].Seq, b, a)
			}
		}

		// Read back and restored, each value equals what the plain store
		// gives back for the same write.
		plainRecs, err := plain.LedgerList(ctx, &store.LedgerListParams{RunID: pid})
		if err != nil || len(plainRecs) != 4 {
			t.Fatalf("plain ledger: %d %v", len(plainRecs), err)
		}
		ledgerMine := func(m *artifact.Metadata) bool {
			src := m.Tags["source"]
			return m.RunID == rid && (src == offload.SourceLedgerEffect || src == offload.SourceLedgerResult)
		}
		for i, r := range stored {
			res, err := artifact.Restore(ctx, arts, r.Result, ledgerMine)
			if err != nil {
				t.Fatalf("restoring result %d: %v", i, err)
			}
			if a, b := fzCanon(res), fzCanon(plainRecs[i].Result); a != b {
				t.Errorf("%s: record %d result after round trip:\n got  %.600s\n want %.600s", order.name, i, a, b)
			}
			var pl, ppl any
			if r.Effect != nil {
				if pl, err = artifact.Restore(ctx, arts, any(r.Effect.Payload), ledgerMine); err != nil {
					t.Fatalf("restoring payload %d: %v", i, err)
				}
			}
			if plainRecs[i].Effect != nil {
				ppl = any(plainRecs[i].Effect.Payload)
			}
			if a, b := fzCanon(pl), fzCanon(ppl); a != b {
				t.Errorf("%s: record %d payload after round trip:\n got  %.600s\n want %.600s", order.name, i, a, b)
			}
		}
		for _, key := range []string{"k0", "k3"} {
			fc, err := store.FindCompleted(ctx, st, rid, key)
			if err != nil || fc == nil {
				t.Fatalf("find completed %s: %v %v", key, fc, err)
			}
			pfc, err := store.FindCompleted(ctx, plain, pid, key)
			if err != nil || pfc == nil {
				t.Fatalf("plain find completed %s: %v %v", key, pfc, err)
			}
			if a, b := fzCanon(fc.Result), fzCanon(pfc.Result); a != b {
				t.Errorf("%s: find completed %s:\n got  %.600s\n want %.600s", order.name, key, a, b)
			}
		}
		// The stored records were not changed by the find.
		again, _ := backend.LedgerList(ctx, &store.LedgerListParams{RunID: rid})
		if rep := hashchain.VerifyLedgerChain(again); !rep.OK || len(again) != 4 {
			t.Errorf("chain after finds: %+v", rep)
		}

		runMine := func(m *artifact.Metadata) bool {
			src := m.Tags["source"]
			return m.RunID == rid && (src == offload.SourceRunVars || src == offload.SourceRunOutput)
		}
		dr, err := st.RunGet(ctx, rid)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := plain.RunGet(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := artifact.Restore(ctx, arts, any(dr.Vars), runMine)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := fzCanon(vars), fzCanon(pr.Vars); a != b {
			t.Errorf("%s: vars after round trip:\n got  %.600s\n want %.600s", order.name, a, b)
		}
		out, err := artifact.Restore(ctx, arts, any(dr.Output), runMine)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := fzCanon(out), fzCanon(pr.Output); a != b {
			t.Errorf("%s: output after round trip:\n got  %.600s\n want %.600s", order.name, a, b)
		}
		// The members spec §4.7 keeps inline stay inline.
		if rt, _ := dr.Vars["_runtime"].(map[string]any); rt != nil {
			if _, isRef := artifact.RefID(rt["memory_spans"]); isRef {
				t.Errorf("memory spans offloaded")
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("timed out: %v", ctx.Err())
		}
	})
}
