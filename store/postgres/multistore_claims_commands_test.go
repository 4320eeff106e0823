package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestClaimRaceOnExpiredClaim: a dead owner's claim has expired; six
// runners (six pools) claim the run at once. Exactly one must win; every
// loser must be told who holds it (the winner).
func TestClaimRaceOnExpiredClaim(t *testing.T) {
	testURL(t)
	rs := openRunners(t, 6)
	ctx := t.Context()
	for round := range 10 {
		id := fmt.Sprintf("claim-race-%d", round)
		if err := rs[0].RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "dead", TTL: 50 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond)
		var wg sync.WaitGroup
		var wins atomic.Int32
		holders := make([]string, len(rs))
		start := make(chan struct{})
		for i, s := range rs {
			wg.Go(func() {
				<-start
				owner := fmt.Sprintf("r%d", i)
				err := s.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: owner, TTL: 5 * time.Second})
				var held *store.ClaimHeldError
				switch {
				case err == nil:
					wins.Add(1)
					holders[i] = owner
				case errors.As(err, &held):
					holders[i] = held.Owner
				default:
					t.Errorf("round %d r%d: %v", round, i, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners for an expired claim (holders %v); want 1", round, wins.Load(), holders)
		}
		for i, h := range holders {
			if h != holders[0] {
				t.Fatalf("round %d: runner %d told holder %q, runner 0 %q", round, i, h, holders[0])
			}
		}
	}
}

// TestClaimLostThenRenew: an expired claim taken by B; A's renewal and
// plain claim are refused (naming B), A's release leaves B's claim, a
// forced claim From the dead owner is refused once B took over.
func TestClaimLostThenRenew(t *testing.T) {
	testURL(t)
	rs := openRunners(t, 3)
	a, b, c := rs[0], rs[1], rs[2]
	ctx := t.Context()
	const id = "lost-renew"
	if err := a.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "A", TTL: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if err := b.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "B", TTL: 5 * time.Second, Force: true, From: "A"}); err != nil {
		t.Fatal(err)
	}
	if err := a.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "A", TTL: time.Second, Renew: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("A renews after B took the run: %v; want ErrConflict", err)
	}
	if err := a.RunRelease(ctx, id, "A"); err != nil {
		t.Fatal(err)
	}
	var held *store.ClaimHeldError
	if err := c.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "C", TTL: time.Second, Force: true, From: "A"}); !errors.As(err, &held) || held.Owner != "B" {
		t.Errorf("C forcing from A after B took over: %v; want ClaimHeldError naming B", err)
	}
	if err := a.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "A", TTL: time.Second}); !errors.As(err, &held) || held.Owner != "B" {
		t.Errorf("A claims again: %v; want ClaimHeldError naming B", err)
	}
	// B releases; A's renewal must not take it back.
	if err := b.RunRelease(ctx, id, "B"); err != nil {
		t.Fatal(err)
	}
	if err := a.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "A", TTL: time.Second, Renew: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("A renews a released claim: %v; want ErrConflict", err)
	}
}

// TestCommandsTwoStoresConcurrent: two stores (two processes) append
// commands at once, a third of them under command ids both send; a
// consumer on a third store follows with its cursor meanwhile. Every
// command must be stored once, seqs gapless, and the consumer must see
// each seq exactly once, in order.
func TestCommandsTwoStoresConcurrent(t *testing.T) {
	testURL(t)
	rs := openRunners(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const perWriter, writers = 60, 4
	type res struct {
		id  string
		seq int64
		dup bool
	}
	var mu sync.Mutex
	var results []res
	var wg sync.WaitGroup
	for si := range 2 {
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					id := fmt.Sprintf("s%d-w%d-%d", si, w, i)
					if i%3 == 0 {
						id = fmt.Sprintf("shared-w%d-%d", w, i) // both stores send it
					}
					c := &durable.CommandRecord{CommandID: id, RunID: "run-" + id, Type: "pause", Payload: map[string]any{"i": i}}
					r, err := rs[si].CommandAppend(ctx, c)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					results = append(results, res{id, r.Seq, r.Duplicate})
					mu.Unlock()
				}
			})
		}
	}
	done := make(chan struct{})
	var seen []int64
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		cursor, _ := rs[2].CursorLoad(ctx, "c")
		for {
			finished := false
			select {
			case <-done:
				finished = true // every append has returned before this list
			default:
			}
			cmds, next, err := rs[2].CommandListAfter(ctx, cursor, 7)
			if err != nil {
				t.Error(err)
				return
			}
			for _, c := range cmds {
				seen = append(seen, c.Seq)
			}
			if next != cursor {
				if err := rs[2].CursorSave(ctx, "c", next); err != nil {
					t.Error(err)
					return
				}
				cursor = next
			}
			if finished && len(cmds) == 0 {
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	<-consumerDone
	bySeq := map[int64]string{}
	byID := map[string]int64{}
	for _, r := range results {
		if prev, ok := byID[r.id]; ok && prev != r.seq {
			t.Errorf("command %s got seqs %d and %d", r.id, prev, r.seq)
		}
		byID[r.id] = r.seq
		if !r.dup {
			if other, ok := bySeq[r.seq]; ok {
				t.Errorf("seq %d accepted for %s and %s", r.seq, other, r.id)
			}
			bySeq[r.seq] = r.id
		}
	}
	n := int64(len(byID))
	for s := int64(1); s <= n; s++ {
		if _, ok := bySeq[s]; !ok {
			t.Errorf("seq %d missing (gap) among %d commands", s, n)
		}
	}
	if int64(len(seen)) != n {
		t.Errorf("consumer saw %d commands, want %d", len(seen), n)
	}
	for i, s := range seen {
		if s != int64(i+1) {
			t.Fatalf("consumer's %dth command has seq %d (seen out of order, lost or twice)", i+1, s)
		}
	}
}

// TestDueListing: a waiting run is due-listed once its deadline
// passed; once committed on (running), it is not; a claim on it does not
// hide it.
func TestDueListing(t *testing.T) {
	testURL(t)
	rs := openRunners(t, 2)
	ctx := t.Context()
	r := testRun("due-1")
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(t0), WaitKey: "k"}
	if err := rs[0].RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	due, err := rs[1].RunListDue(ctx, &store.RunListDueParams{Now: t0.Add(time.Second)})
	if err != nil || len(due) != 1 || due[0].RunID != "due-1" {
		t.Fatalf("due = %v, %v; want due-1", due, err)
	}
	r.Status, r.Waiting = durable.RunRunning, nil
	if err := rs[0].RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
	due, err = rs[1].RunListDue(ctx, &store.RunListDueParams{Now: t0.Add(time.Second)})
	if err != nil || len(due) != 0 {
		t.Fatalf("due after running = %v, %v; want none", due, err)
	}
}
