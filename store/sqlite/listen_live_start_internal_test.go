package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Listeners started while the store writes: none hears the store's own
// writes, whichever side of its start they commit on.
func TestListenLiveListenersStartedDuringWrites(t *testing.T) {
	_, create, appendN, _ := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, err := New(ctx, Config{Path: path, Shared: true, ListenEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(ctx, Config{Path: path, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, r := range []string{"o1", "o2", "f1"} {
		create(b, r, 0)
	}
	lctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	bad := []string{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := "o1"
			if i%2 == 1 {
				r = "o2"
			}
			appendN(a, r, 1+i%3)
			if i%7 == 0 {
				if _, err := a.LedgerDelete(ctx, r); err != nil {
					t.Error(err)
				}
			}
			if i%11 == 0 {
				appendN(b, "f1", 1)
			}
		}
	}()
	var lw sync.WaitGroup
	for l := range 4 {
		time.Sleep(20 * time.Millisecond)
		lw.Add(1)
		go func() {
			defer lw.Done()
			_ = a.ListenLedger(lctx, func() {}, func(id string, del bool) {
				if id == "o1" || id == "o2" {
					mu.Lock()
					bad = append(bad, itoa(l)+":"+id)
					mu.Unlock()
				}
			})
		}()
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	time.Sleep(20 * time.Millisecond)
	cancel()
	lw.Wait()
	if len(bad) > 0 {
		t.Fatalf("own writes reported: %v", bad)
	}
	for _, f := range a.own.follows {
		_ = f
	}
}
