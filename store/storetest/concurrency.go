package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

var concurrencyTests = []subtest{
	{"OneWinnerPerVersion", testOneWinnerPerVersion},
	{"DistinctRuns", testConcurrentDistinctRuns},
	{"ListsMatchTheirFilters", testListsMatchFilters},
	{"LedgerNeverBehindState", testLedgerNeverBehind},
}

// testListsMatchFilters flips runs between an event wait and running
// while readers list them: every run a list returns matches its filters
// in the state returned (a caller may act on what it reads, e.g. deliver
// an event to each listed waiter), whatever the interleaving.
func testListsMatchFilters(t *testing.T, s store.Store) {
	const runs, flips = 4, 60
	var writers sync.WaitGroup
	errs := make(chan error, runs+2)
	waitParams := &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent, WaitKeys: []string{"evt:k"}}
	stopReaders := readWhile(errs, func() error {
		listed, err := s.RunList(t.Context(), waitParams)
		if err == nil {
			for _, r := range listed {
				if !waitParams.Matches(r) {
					err = fmt.Errorf("RunList(waiting on evt:k) returned %s %s with wait %+v", r.RunID, r.Status, r.Waiting)
					break
				}
			}
		}
		if err == nil {
			var kids []*durable.RunState
			kids, err = s.RunListChildren(t.Context(), "parent", durable.RunWaiting)
			for _, k := range kids {
				if k.Status != durable.RunWaiting {
					err = fmt.Errorf("RunListChildren(waiting) returned %s %s", k.RunID, k.Status)
				}
			}
		}
		return err
	})
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		writers.Go(func() {
			r := newRun(id, runOpts{Parent: "parent", Wait: keyWait(durable.WaitEvent, "evt:k")})
			if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
				errs <- err
				return
			}
			for f := range flips {
				if f%2 == 0 {
					r.Status, r.Waiting = durable.RunRunning, nil
				} else {
					r.Status, r.Waiting = durable.RunWaiting, keyWait(durable.WaitEvent, "evt:k")
				}
				if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	writers.Wait()
	stopReaders()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// readWhile runs read in a loop on two goroutines until the returned stop
// is called; the first error of each goes to errs, ending its loop.
func readWhile(errs chan<- error, read func() error) (stop func()) {
	var readers sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := read(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	return func() {
		close(done)
		readers.Wait()
	}
}

// testOneWinnerPerVersion races N writers that all read the same version:
// exactly one commit wins each round, the others get ErrConflict and write
// no records.
func testOneWinnerPerVersion(t *testing.T, s store.Store) {
	const writers, rounds = 8, 5
	create(t, s, newRun("run-1", runOpts{}))
	for round := range rounds {
		read := get(t, s, "run-1")
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			r := read.Clone()
			r.CurrentNode = fmt.Sprintf("r%d-w%d", round, w)
			r.Vars["writer"] = r.CurrentNode
			rec := newRecord("run-1", r.CurrentNode, durable.StepCompleted)
			wg.Go(func() {
				errs[w] = s.RunCommit(t.Context(), &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}})
			})
		}
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both committed version %d", round, winner, w, read.Version)
			case err == nil:
				winner = w
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d writer %d: err = %v, want ErrConflict", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		got := get(t, s, "run-1")
		if want := fmt.Sprintf("r%d-w%d", round, winner); got.CurrentNode != want || got.Vars["writer"] != want {
			t.Fatalf("round %d: stored node %q, want the winner's %q", round, got.CurrentNode, want)
		}
		if got.Version != read.Version+1 {
			t.Fatalf("round %d: version %d, want %d", round, got.Version, read.Version+1)
		}
	}
	recs := ledger(t, s, "run-1")
	if len(recs) != rounds {
		t.Fatalf("ledger has %d records, want %d (one per winning commit)", len(recs), rounds)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d Seq = %d", i, r.Seq)
		}
	}
}

// testConcurrentDistinctRuns commits many runs and ledger appends in
// parallel while readers query; every record gets its own seq per run.
func testConcurrentDistinctRuns(t *testing.T, s store.Store) {
	const runs, steps = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, runs*steps*2+16)
	stopReaders := readWhile(errs, func() error {
		ctx := t.Context()
		_, e1 := s.RunList(ctx, &store.RunListParams{Status: durable.RunWaiting})
		_, e2 := s.RunListChildren(ctx, "parent", "")
		_, e3 := s.RunIndex(ctx, &store.RunIndexParams{})
		_, e4 := s.RunListDue(ctx, &store.RunListDueParams{Now: base.Add(time.Hour)})
		_, e5 := s.LedgerList(ctx, &store.LedgerListParams{RunID: "run-0", After: 1})
		return errors.Join(e1, e2, e3, e4, e5)
	})
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		wg.Go(func() {
			r := newRun(id, runOpts{Parent: "parent", Wait: untilWait(time.Second)})
			if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
				errs <- err
				return
			}
			for range steps {
				rec := newRecord(id, "n", durable.StepCompleted)
				if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}}); err != nil {
					errs <- err
				}
				if err := s.LedgerAppend(t.Context(), id, []*durable.StepRecord{newRecord(id, "n", durable.StepStarted)}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	stopReaders()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		recs := ledger(t, s, id)
		if len(recs) != 2*steps {
			t.Errorf("%s: %d records, want %d", id, len(recs), 2*steps)
		}
		for j, r := range recs {
			if r.Seq != int64(j+1) {
				t.Errorf("%s record %d: Seq %d", id, j, r.Seq)
			}
		}
		if got := get(t, s, id); got.Version != steps+1 {
			t.Errorf("%s: version %d, want %d", id, got.Version, steps+1)
		}
	}
}
