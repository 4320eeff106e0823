package sqlite

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// writeOwnAtRandom makes the store s append to runs o1 and o2 and delete
// their ledgers now and then, until the returned stop is called; each,
// when set, runs after every round (i its number) and is told what was
// done ("+o1 2": two records appended to o1, "-o1": its ledger deleted).
func writeOwnAtRandom(t *testing.T, s *Store, appendN func(*Store, string, int), each func(i int, done string)) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			r := "o1"
			if i%2 == 1 {
				r = "o2"
			}
			appendN(s, r, 1+i%3)
			done := "+" + r + " " + strconv.Itoa(1+i%3)
			if i%7 == 0 {
				if _, err := s.LedgerDelete(context.Background(), r); err != nil {
					t.Error(err)
				}
				done += ", -" + r
			}
			if each != nil {
				each(i, done)
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
	}
}

// Looks made while the store writes, a listener started at a random moment
// of its writes: the looks never report the store's own appends or deletes.
func TestListenLiveHearsNoOwnWrite(t *testing.T) {
	open, create, appendN, _ := listenHelpers(t)
	ctx := t.Context()
	for iter := range raceRounds() * 3 / 4 {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		for _, r := range []string{"o1", "o2"} {
			create(b, r, 0)
		}
		var mu sync.Mutex
		var ops []string
		stop := writeOwnAtRandom(t, a, appendN, func(_ int, done string) {
			mu.Lock()
			ops = append(ops, done)
			mu.Unlock()
		})
		time.Sleep(time.Duration(iter%5) * time.Millisecond)
		f, rowTop, delTop, err := a.startFollow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); {
			var heard []string
			if err := a.listenOnce(ctx, f, &rowTop, &delTop, func(id string, _ bool) { heard = append(heard, id) }); err != nil {
				t.Fatal(err)
			}
			if len(heard) > 0 {
				stop()
				t.Fatalf("round %d: own writes reported %q; the last writes %v", iter, heard, ops[max(0, len(ops)-20):])
			}
		}
		stop()
		a.own.remove(f)
		_ = a.Close()
		_ = b.Close()
	}
}

// Listeners started while the store writes: none hears the store's own
// writes, whichever side of its start they commit on.
func TestListenLiveListenersStartedDuringWrites(t *testing.T) {
	open, create, appendN, _ := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, err := New(ctx, Config{Path: path, Shared: true, ListenEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := open(path)
	for _, r := range []string{"o1", "o2", "f1"} {
		create(b, r, 0)
	}
	stop := writeOwnAtRandom(t, a, appendN, func(i int, _ string) {
		if i%11 == 0 {
			appendN(b, "f1", 1) // another process's writes between them
		}
	})
	lctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var bad []string
	var lw sync.WaitGroup
	for l := range 4 {
		time.Sleep(20 * time.Millisecond)
		lw.Add(1)
		go func() {
			defer lw.Done()
			_ = a.ListenLedger(lctx, func() {}, func(id string, _ bool) {
				if id == "o1" || id == "o2" {
					mu.Lock()
					bad = append(bad, strconv.Itoa(l)+":"+id)
					mu.Unlock()
				}
			})
		}()
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	time.Sleep(20 * time.Millisecond)
	cancel()
	lw.Wait()
	if len(bad) > 0 {
		t.Fatalf("own writes reported: %v", bad)
	}
}
