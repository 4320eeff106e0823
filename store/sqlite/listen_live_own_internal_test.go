package sqlite

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Real ListenLedger loops on a store only it writes to, its appends and
// deletes made at random: nothing is ever heard.
func TestListenLiveHearsNoOwnWrite(t *testing.T) {
	open, create, appendN, follow := listenHelpers(t)
	ctx := t.Context()
	for iter := range raceRounds() * 3 / 4 {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		for _, r := range []string{"o1", "o2"} {
			create(b, r, 0)
		}
		var mu sync.Mutex
		var ops []string
		logop := func(s string) { mu.Lock(); ops = append(ops, s); mu.Unlock() }
		stop := make(chan struct{})
		var wg sync.WaitGroup
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
				logop("+" + r + itoa(1+i%3))
				if i%7 == 0 {
					if _, err := a.LedgerDelete(ctx, r); err != nil {
						t.Error(err)
					}
					logop("-" + r)
				}
			}
		}()
		_ = follow
		time.Sleep(time.Duration(iter%5) * time.Millisecond)
		f, rowTop, delTop, err := a.startFollow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		logop("follow " + itoa(int(rowTop)) + " " + itoa(int(delTop)))
		next := func() []string {
			var heard []string
			r0, d0 := rowTop, delTop
			var top, ltop int64
			_ = a.rdb.QueryRow(`SELECT (SELECT MAX(rowid) FROM ledger), (SELECT MAX(rowid) FROM ledger_deletes)`).Scan(&top, &ltop)
			if err := a.listenOnce(ctx, f, &rowTop, &delTop, func(id string, deleted bool) {
				heard = append(heard, id)
			}); err != nil {
				t.Fatal(err)
			}
			logop("look[" + itoa(int(r0)) + "," + itoa(int(d0)) + "->" + itoa(int(rowTop)) + "," + itoa(int(delTop)) + " pre " + itoa(int(top)) + "," + itoa(int(ltop)) + "]")
			return heard
		}
		deadline := time.Now().Add(100 * time.Millisecond)
		for time.Now().Before(deadline) {
			got := next()
			if len(got) > 0 {
				close(stop)
				wg.Wait()
				mu.Lock()
				var l1, l2, c1 int64
				_ = a.rdb.QueryRow(`SELECT MAX(rowid), COUNT(*) FROM ledger_deletes`).Scan(&l1, &c1)
				_ = b.rdb.QueryRow(`SELECT MAX(rowid) FROM ledger_deletes`).Scan(&l2)
				rs, _ := a.rdb.Query(`SELECT rowid, run_id FROM ledger_deletes ORDER BY rowid DESC LIMIT 5`)
				var tail []string
				for rs.Next() {
					var id int64
					var r string
					_ = rs.Scan(&id, &r)
					tail = append(tail, itoa(int(id))+r)
				}
				rs.Close()
				t.Logf("log max via a %d (count %d), via b %d; tail %v", l1, c1, l2, tail)
				t.Fatalf("iter %d: own writes reported %q; ops %v; notes %v", iter, got, ops[max(0, len(ops)-60):], f.rows)
			}
		}
		close(stop)
		wg.Wait()
		_ = a.Close()
		_ = b.Close()
	}
}
