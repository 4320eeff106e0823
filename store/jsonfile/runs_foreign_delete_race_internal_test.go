package jsonfile

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// goneRaceRun is a run waiting until `until` (due once passed),
// updated at `updated`.
func goneRaceRun(id string, until, updated time.Time) *durable.RunState {
	return &durable.RunState{
		RunID: id, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
		CreatedAt: durable.NewTime(updated), UpdatedAt: durable.NewTime(updated),
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(until), AllowFreeText: true},
	}
}

// waitBlockedIn waits until some goroutine's stack shows it inside
// fn and blocked on an RWMutex read lock.
func waitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n := runtime.Stack(buf, true)
		for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
			if strings.Contains(g, fn) && strings.Contains(g, "RWMutex).RLock") {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no goroutine blocked in %s", fn)
}

// goneRaceSetup makes runs a, b and c (a first in both orders: the
// earliest deadline and the latest update), removes a's file as another
// process would, and holds a's stripe exclusively, as a commit of
// another run of that stripe (or a RunGet of a that got there first)
// does.
func goneRaceSetup(t *testing.T) (*Store, func()) {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	now := time.Now().UTC()
	for i, id := range []string{"a", "b", "c"} {
		r := goneRaceRun(id, now.Add(-time.Hour+time.Duration(i)*time.Minute), now.Add(-time.Duration(i)*time.Minute))
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "run_a.json")); err != nil {
		t.Fatal(err)
	}
	lk := s.stripe("a")
	lk.Lock()
	return s, lk.Unlock
}

// TestDueListingRelistsWhenAGoneRunIsForgottenElsewhere: RunListDue (runs.go)
// promises that a run whose file another process deleted is neither
// listed nor takes the place of one still due (a listing cut at its
// limit), and that it lists again until so. dropGone used to report only
// the runs *this call* forgot: when another goroutine (a RunGet of the
// run, a RunIndex of the UI, a second listing) forgets the same run
// between this call's snapshot of the deadline index and its
// forgetGoneLocked, forgetGoneLocked found s.runs[id] already nil and
// returned false, so the listing made with the gone run in it was
// returned: the scheduler was handed a run whose file is gone, in place
// of c. Python's list_due_wait_until (JsonFileRunStore, scanning the
// run files) never lists it. Here the other goroutine's forget is made
// deterministic: the test holds a's stripe (as that goroutine does) and
// forgets a while the listing waits for it.
func TestDueListingRelistsWhenAGoneRunIsForgottenElsewhere(t *testing.T) {
	ids := listedDuringForget(t, func(s *Store) ([]string, error) {
		due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: time.Now(), Limit: 2})
		var ids []string
		for _, d := range due {
			ids = append(ids, d.RunID)
		}
		return ids, err
	})
	if !slices.Equal(ids, []string{"b", "c"}) {
		t.Errorf("RunListDue(limit 2) racing another forget of a = %v, want [b c] (a's file is gone)", ids)
	}
}

// listedDuringForget runs list over goneRaceSetup's store and, while the
// listing waits in dropGone for a's stripe, forgets a as a RunGet of a
// holding the stripe shared would; it returns the ids listed.
func listedDuringForget(t *testing.T, list func(*Store) ([]string, error)) []string {
	t.Helper()
	s, unlock := goneRaceSetup(t)
	type result struct {
		ids []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		ids, err := list(s)
		done <- result{ids, err}
	}()
	waitBlockedIn(t, "(*Store).dropGone")
	s.forgetGoneLocked("a")
	unlock()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.ids
}

// TestIndexRelistsWhenAGoneRunIsForgottenElsewhere: the same race in RunIndex
// (runs.go), whose comment promises that a deleted run "is not listed
// (nor takes the place of one that is)": a concurrent forget of the run
// made dropGone report nothing dropped, and the rows returned still held
// the gone run, in place of c. Python's list_run_index scans the run
// files and does not list it.
func TestIndexRelistsWhenAGoneRunIsForgottenElsewhere(t *testing.T) {
	ids := listedDuringForget(t, func(s *Store) ([]string, error) {
		rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{Limit: 2})
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.RunID)
		}
		return ids, err
	})
	if !slices.Equal(ids, []string{"b", "c"}) {
		t.Errorf("RunIndex(limit 2) racing another forget of a = %v, want [b c] (a's file is gone)", ids)
	}
}

// TestRacingListingsNeverListAGoneRun: the race above with real
// goroutines and the public API only: two RunListDue calls (the
// scheduler's poll and its wait computation, or two runners' schedulers
// sharing a store handle) and a RunGet of the deleted run, started
// together. Over many rounds one of the listings returns the gone run.
func TestRacingListingsNeverListAGoneRun(t *testing.T) {
	ctx := t.Context()
	bad := 0
	for round := range 300 {
		dir := t.TempDir()
		s, err := New(Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		for i, id := range []string{"a", "b", "c"} {
			r := goneRaceRun(id, now.Add(-time.Hour+time.Duration(i)*time.Minute), now.Add(-time.Duration(i)*time.Minute))
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Remove(filepath.Join(dir, "run_a.json")); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		out := make(chan []string, 2)
		for range 2 {
			go func() {
				<-start
				due, _ := s.RunListDue(ctx, &store.RunListDueParams{Now: time.Now(), Limit: 2})
				var ids []string
				for _, d := range due {
					ids = append(ids, d.RunID)
				}
				out <- ids
			}()
		}
		got := make(chan struct{})
		go func() { <-start; _, _ = s.RunGet(ctx, "a"); close(got) }()
		close(start)
		for range 2 {
			if ids := <-out; slices.Contains(ids, "a") {
				bad++
				if bad == 1 {
					t.Errorf("round %d: RunListDue(limit 2) = %v: lists run a, whose file is gone", round, ids)
				}
			}
		}
		<-got
		_ = s.Close()
	}
	if bad > 0 {
		t.Logf("%d of 600 listings held the gone run", bad)
	}
}
