package storetest_test

// FuzzObserveScript: a fuzzed script of writes, deletes, refused writes,
// subscribes and cancels over the decorator stacks; every subscription
// must be told exactly what a model says, in order.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

type fzEvent struct {
	run     string
	seqs    []int64
	deleted bool
}

func (e fzEvent) String() string {
	if e.deleted {
		return fmt.Sprintf("delete(%s)", e.run)
	}
	return fmt.Sprintf("%s%v", e.run, e.seqs)
}

type fzSub struct {
	sub    *observe.Subscription
	run    string // "" follows all
	closed bool
}

func FuzzObserveScript(f *testing.F) {
	f.Add([]byte{2, 0, 1, 8, 4, 1, 5, 3, 0}, uint8(0))
	f.Add([]byte{0x22, 0x0a, 0x09, 0x01, 0x04, 0x0c, 0x05, 0x00, 0x03, 0x02, 0x11}, uint8(0x11))
	f.Add([]byte{2, 0x3a, 0x0b, 0x19, 0x1c, 0x14, 0x21, 0x0d}, uint8(2))
	f.Add([]byte{0x1a, 0x01, 0x01, 0x09, 0x04, 0x04, 0x0c, 0x00, 0x05, 0x0d}, uint8(0x13))
	var sq fzSQLite
	dir := f.TempDir()
	f.Cleanup(func() {
		if sq.st != nil {
			_ = sq.st.Close()
		}
	})
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, script []byte, sel uint8) {
		if len(script) > 64 {
			script = script[:64]
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		order := fuzzOrders[int(sel)%len(fuzzOrders)]
		var backend store.Store
		if sel&0x10 != 0 {
			sq.once.Do(func() {
				sq.st, sq.err = sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(dir, "obs.sqlite3")})
			})
			if sq.err != nil {
				t.Fatal(sq.err)
			}
			backend = sq.st
		} else {
			backend = memory.New()
		}
		st, obs := order.mk(backend, artifact.NewMemory(), 64)
		prefix := fmt.Sprintf("x%d-", n.Add(1))
		runIDs := []string{prefix + "a", prefix + "b", prefix + "c"}
		runs := map[string]*durable.RunState{}
		count := map[string]int64{} // the model's ledger length of each run
		var subs []*fzSub
		want := map[*fzSub][]fzEvent{}
		defer func() {
			for _, s := range subs {
				if !s.closed {
					s.sub.Cancel()
				}
			}
		}()
		notify := func(ev fzEvent) {
			for _, s := range subs {
				if !s.closed && (s.run == "" || s.run == ev.run) {
					want[s] = append(want[s], ev)
				}
			}
		}
		mkRecs := func(run string, k int, b byte) []*durable.StepRecord {
			var out []*durable.StepRecord
			for i := 0; i < k; i++ {
				now := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
				out = append(out, &durable.StepRecord{RunID: run, StepID: fmt.Sprintf("s%d", i), NodeID: "n", Status: durable.StepCompleted,
					StartedAt: now, EndedAt: now, Attempt: 1, Seq: int64(b), // a seq left by the caller is overwritten
					Result: map[string]any{"t": strings.Repeat("v", int(b)), "i": i}})
			}
			return out
		}
		for step, b := range script {
			r := runIDs[int(b>>3)%len(runIDs)]
			k := 1 + int(b>>5)%2
			what := ""
			switch b % 6 {
			case 0: // append
				what = "append"
				if err := st.LedgerAppend(ctx, r, mkRecs(r, k, b)); err != nil {
					t.Fatalf("step %d: append: %v", step, err)
				}
				notify(fzEvent{run: r, seqs: seqRange(count[r]+1, count[r]+int64(k))})
				count[r] += int64(k)
			case 1: // commit, creating the run the first time
				what = "commit"
				run, ok := runs[r]
				if !ok {
					run = &durable.RunState{RunID: r, WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "n", Vars: map[string]any{}}
				}
				run.Vars["big"] = strings.Repeat("q", int(b))
				if b&0x40 != 0 && ok {
					run.Status = durable.RunCompleted
					run.Output = map[string]any{"o": strings.Repeat("o", int(b))}
				}
				if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: !ok, Records: mkRecs(r, k, b)}); err != nil {
					t.Fatalf("step %d: commit: %v", step, err)
				}
				runs[r] = run
				notify(fzEvent{run: r, seqs: seqRange(count[r]+1, count[r]+int64(k))})
				count[r] += int64(k)
			case 2: // subscribe
				what = "subscribe"
				follow := r
				if b&0x80 != 0 {
					follow = ""
				}
				s := &fzSub{sub: obs.Subscribe(follow, 1+int(b>>6)), run: follow}
				subs = append(subs, s)
			case 3: // cancel
				what = "cancel"
				if len(subs) > 0 {
					s := subs[int(b>>3)%len(subs)]
					s.sub.Cancel()
					s.closed = true
				}
			case 4: // delete the ledger
				what = "delete"
				got, err := st.LedgerDelete(ctx, r)
				if err != nil {
					t.Fatalf("step %d: delete: %v", step, err)
				}
				if got != count[r] {
					t.Errorf("step %d: deleted %d records, model has %d", step, got, count[r])
				}
				if got > 0 {
					notify(fzEvent{run: r, deleted: true})
				}
				count[r] = 0
			case 5: // refused writes: a stale commit, an append without a run id
				what = "refused"
				if run, ok := runs[r]; ok {
					stale := run.Clone()
					stale.Version += 3
					if err := st.RunCommit(ctx, &store.CommitParams{Run: stale, Records: mkRecs(r, k, b)}); !errors.Is(err, store.ErrConflict) {
						t.Fatalf("step %d: stale commit: %v", step, err)
					}
				}
				if err := st.LedgerAppend(ctx, "", mkRecs("", 1, b)); err == nil {
					t.Fatalf("step %d: append without a run id succeeded", step)
				}
			}
			// Every subscription has exactly what the model says.
			for si, s := range subs {
				var got []fzEvent
				if !s.closed {
				drain:
					for {
						select {
						case ev, ok := <-s.sub.C:
							if !ok {
								t.Fatalf("subscription %d closed while live", si)
							}
							e := fzEvent{run: ev.RunID, deleted: ev.Deleted}
							for _, rec := range ev.Records {
								e.seqs = append(e.seqs, rec.Seq)
							}
							if what == "refused" && !ev.Deleted && len(ev.Records) == 0 && ev.RunID == r {
								continue // a failed write may wake its run's followers (observe.notifyAppended)
							}
							got = append(got, e)
							if !ev.Deleted {
								checkNotified(t, ctx, backend, ev)
							}
						default:
							break drain
						}
					}
					if s.sub.Lagged() {
						t.Errorf("step %d (%s): subscription %d lagged with a drained buffer", step, what, si)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want[s]) {
					t.Fatalf("%s step %d (%s %s): subscription %d (run %q) got %v, want %v", order.name, step, what, r, si, s.run, got, want[s])
				}
				want[s] = nil
			}
		}
		for _, r := range runIDs {
			recs, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: r})
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(recs)) != count[r] {
				t.Errorf("run %s: %d records, model %d", r, len(recs), count[r])
			}
			if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
				t.Errorf("%s: run %s chain: %+v", order.name, r, rep)
			}
		}
	})
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// checkNotified compares the notified records with the stored ones.
func checkNotified(t *testing.T, ctx context.Context, backend store.Store, ev observe.Event) {
	t.Helper()
	stored, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: ev.RunID})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range ev.Records {
		if rec.Seq < 1 || rec.Seq > int64(len(stored)) {
			t.Fatalf("notified seq %d of run %s, %d stored", rec.Seq, ev.RunID, len(stored))
		}
		a, _ := durable.MarshalRecord(rec, pyjson.Line)
		b, _ := durable.MarshalRecord(stored[rec.Seq-1], pyjson.Line)
		if string(a) != string(b) {
			t.Errorf("notified record %d of run %s:\n%s\nstored:\n%s", rec.Seq, ev.RunID, a, b)
		}
	}
}
