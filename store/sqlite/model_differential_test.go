package sqlite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func modelErrClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, store.ErrAlreadyExists):
		return "exists"
	case errors.Is(err, store.ErrConflict):
		return "conflict"
	case errors.Is(err, store.ErrNotFound):
		return "notfound"
	}
	return "other:" + err.Error()
}

type modelComparable interface {
	store.RunStore
	store.LedgerStore
}

func modelSnapshot(t *testing.T, s modelComparable, ids []string, now time.Time) string {
	ctx := t.Context()
	var b strings.Builder
	for _, id := range ids {
		r, err := s.RunGet(ctx, id)
		if err != nil {
			fmt.Fprintf(&b, "%s run %s\n", id, modelErrClass(err))
		} else {
			fmt.Fprintf(&b, "%s run v%d %s i=%v\n", id, r.Version, r.Status, r.Vars["i"])
		}
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []string
		for _, rec := range recs {
			seqs = append(seqs, fmt.Sprintf("%d:%s", rec.Seq, rec.StepID))
		}
		n, err := s.LedgerCount(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s ledger %d %v\n", id, n, seqs)
	}
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var dids []string
	for _, d := range due {
		dids = append(dids, d.RunID)
	}
	slices.Sort(dids)
	fmt.Fprintf(&b, "due %v\n", dids)
	return b.String()
}

// Model-based regression checks. They compare
// the SQLite store with the memory store (the reference of the store
// contract) over seeded random commits, appends, deletes and reads:
// an owned store with a tiny cache (evictions) whose redo queue is held
// back at random, with crash images (database, WAL and redo log copied as
// a SIGKILL leaves them) opened and compared at random points and after a
// clean close and reopen; two shared stores on one file alternating; and
// concurrent committers checking read-your-writes, ledger seqs and the
// due list under -race.
func TestModelDifferential(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { modelDiff(t, seed) })
	}
}

func TestModelDifferentialShared(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { modelDiffShared(t, seed) })
	}
}

func modelDiffShared(t *testing.T, seed uint64) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 9))
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	var ss [2]*Store
	for k := range ss {
		s, err := New(ctx, Config{Path: path, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ss[k] = s
	}
	m := memory.New()
	ids := []string{strings.Repeat("a", 32), strings.Repeat("b", 32), strings.Repeat("c", 32)}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := base.Add(50 * time.Second)
	step := 0
	for i := 0; i < 300; i++ {
		s := ss[rng.IntN(2)]
		id := ids[rng.IntN(len(ids))]
		op := rng.IntN(8)
		var e1, e2 error
		desc := ""
		switch {
		case op < 5:
			create := rng.IntN(3) == 0
			var ver int64
			if !create {
				if r, err := m.RunGet(ctx, id); err == nil {
					ver = r.Version
				}
			}
			st := durable.RunRunning
			var w *durable.WaitState
			if rng.IntN(2) == 0 {
				st = durable.RunWaiting
				w = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(base.Add(time.Duration(rng.IntN(100)) * time.Second))}
			}
			mk := func() *store.CommitParams {
				r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: st, Version: ver, Vars: map[string]any{"i": i},
					UpdatedAt: durable.NewTime(base.Add(time.Duration(i) * time.Second))}
				if w != nil {
					ww := *w
					r.Waiting = &ww
				}
				step++
				return &store.CommitParams{Run: r, Create: create, Records: []*durable.StepRecord{{RunID: id, StepID: fmt.Sprint("s", step), Status: durable.StepCompleted}}}
			}
			e1 = s.RunCommit(ctx, mk())
			step--
			e2 = m.RunCommit(ctx, mk())
			desc = "commit"
		case op < 6:
			step++
			e1 = s.LedgerAppend(ctx, id, []*durable.StepRecord{{RunID: id, StepID: fmt.Sprint("s", step)}})
			e2 = m.LedgerAppend(ctx, id, []*durable.StepRecord{{RunID: id, StepID: fmt.Sprint("s", step)}})
			desc = "append"
		case op < 7:
			_, e1 = s.RunDelete(ctx, id)
			_, e2 = m.RunDelete(ctx, id)
			desc = "rundelete"
		default:
			_, e1 = s.LedgerDelete(ctx, id)
			_, e2 = m.LedgerDelete(ctx, id)
			desc = "ledgerdelete"
		}
		if modelErrClass(e1) != modelErrClass(e2) {
			t.Fatalf("op %d %s on %s: sqlite %v, memory %v", i, desc, id[:1], e1, e2)
		}
		for k := range ss {
			if got, want := modelSnapshot(t, ss[k], ids, now), modelSnapshot(t, m, ids, now); got != want {
				t.Fatalf("op %d %s on %s: store %d differs:\n got:\n%s\nwant:\n%s", i, desc, id[:1], k, got, want)
			}
		}
	}
}

func modelDiff(t *testing.T, seed uint64) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 7))
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	s, err := New(ctx, Config{Path: path, CacheBytes: int64(1000 + 1000*(seed%5)), IdleCheckpoint: -1, CheckpointPages: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	g := &redoRig{t: t, s: s, path: path}
	m := memory.New()
	ids := []string{strings.Repeat("a", 32), strings.Repeat("b", 32), strings.Repeat("c", 32), strings.Repeat("d", 32)}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := base.Add(50 * time.Second)
	step := 0
	for i := 0; i < 400; i++ {
		if rng.IntN(4) == 0 {
			HoldRedoQueue(s, rng.IntN(2) == 0)
		}
		id := ids[rng.IntN(len(ids))]
		op := rng.IntN(10)
		var e1, e2 error
		desc := ""
		switch {
		case op < 5: // commit (create or update)
			create := rng.IntN(3) == 0
			var ver int64
			if !create {
				if r, err := m.RunGet(ctx, id); err == nil {
					ver = r.Version
					if rng.IntN(8) == 0 {
						ver--
					}
				}
			}
			mk := func() *store.CommitParams {
				r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, Version: ver,
					Vars: map[string]any{"i": i}, UpdatedAt: durable.NewTime(base.Add(time.Duration(i) * time.Second))}
				if create {
					r.Version = 0
				}
				switch rng.IntN(3) {
				case 0:
					r.Status = durable.RunWaiting
					r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(base.Add(time.Duration(rng.IntN(100)) * time.Second))}
				case 1:
					r.Status = durable.RunCompleted
				}
				var recs []*durable.StepRecord
				for k := rng.IntN(3); k > 0; k-- {
					step++
					recs = append(recs, &durable.StepRecord{RunID: id, StepID: fmt.Sprint("s", step), Status: durable.StepCompleted})
				}
				return &store.CommitParams{Run: r, Create: create, Records: recs}
			}
			p := mk()
			// same params for both (copy run and records)
			rc := *p.Run
			var recs2 []*durable.StepRecord
			for _, r := range p.Records {
				c := *r
				recs2 = append(recs2, &c)
			}
			if rc.Waiting != nil {
				w := *rc.Waiting
				rc.Waiting = &w
			}
			p2 := &store.CommitParams{Run: &rc, Create: p.Create, Records: recs2}
			e1 = s.RunCommit(ctx, p)
			e2 = m.RunCommit(ctx, p2)
			desc = fmt.Sprintf("commit create=%v ver=%d status=%s", create, ver, p2.Run.Status)
		case op < 6:
			step++
			recs := []*durable.StepRecord{{RunID: id, StepID: fmt.Sprint("s", step), Status: durable.StepCompleted}}
			recs2 := []*durable.StepRecord{{RunID: id, StepID: fmt.Sprint("s", step), Status: durable.StepCompleted}}
			e1 = s.LedgerAppend(ctx, id, recs)
			e2 = m.LedgerAppend(ctx, id, recs2)
			desc = "append"
		case op < 7:
			_, e1 = s.RunDelete(ctx, id)
			_, e2 = m.RunDelete(ctx, id)
			desc = "rundelete"
		case op < 8:
			_, e1 = s.LedgerDelete(ctx, id)
			_, e2 = m.LedgerDelete(ctx, id)
			desc = "ledgerdelete"
		case op < 9:
			if rng.IntN(2) == 0 {
				_, _ = s.RunGet(ctx, id)
			} else {
				_, _ = s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			}
			desc = "read"
		default:
			var img string
			g.held(func() { img = g.image() })
			c, err := New(ctx, Config{Path: img, IdleCheckpoint: -1})
			if err != nil {
				t.Fatalf("op %d: open image: %v", i, err)
			}
			got, want := modelSnapshot(t, c, ids, now), modelSnapshot(t, m, ids, now)
			_ = c.Close()
			if got != want {
				t.Fatalf("op %d: crash image differs:\n got:\n%s\nwant:\n%s", i, got, want)
			}
			desc = "image"
		}
		if modelErrClass(e1) != modelErrClass(e2) {
			t.Fatalf("op %d %s on %s: sqlite %v, memory %v", i, desc, id[:1], e1, e2)
		}
		if rng.IntN(6) != 0 {
			continue
		}
		if got, want := modelSnapshot(t, s, ids, now), modelSnapshot(t, m, ids, now); got != want {
			t.Fatalf("op %d %s on %s: state differs:\n got:\n%s\nwant:\n%s", i, desc, id[:1], got, want)
		}
	}
	HoldRedoQueue(s, false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := modelSnapshot(t, c, ids, now), modelSnapshot(t, m, ids, now); got != want {
		t.Fatalf("reopen differs:\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestConcurrentCommittersAgainstCache(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	s, err := New(ctx, Config{Path: path, CacheBytes: 4000, IdleCheckpoint: 5 * time.Millisecond, CheckpointPages: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const W, N = 4, 60
	errs := make(chan error, W*2)
	done := make(chan struct{})
	for w := 0; w < W; w++ {
		go func(w int) {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			id := fmt.Sprintf("%031d%d", 0, w)
			r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning}
			step := 0
			for i := 0; i < N; i++ {
				r.Vars = map[string]any{"i": i}
				r.Waiting, r.Status = nil, durable.RunRunning
				if rng.IntN(2) == 0 {
					r.Status = durable.RunWaiting
					r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(base.Add(time.Duration(rng.IntN(100)) * time.Second))}
				}
				var recs []*durable.StepRecord
				for k := rng.IntN(3); k > 0; k-- {
					step++
					recs = append(recs, &durable.StepRecord{RunID: id, StepID: fmt.Sprint("s", step), Status: durable.StepCompleted})
				}
				if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: i == 0, Records: recs}); err != nil {
					errs <- fmt.Errorf("w%d commit %d: %w", w, i, err)
					return
				}
				if rng.IntN(4) == 0 {
					step++
					if err := s.LedgerAppend(ctx, id, []*durable.StepRecord{{RunID: id, StepID: fmt.Sprint("s", step)}}); err != nil {
						errs <- err
						return
					}
				}
				got, err := s.RunGet(ctx, id)
				if err != nil || got.Version != r.Version || fmt.Sprint(got.Vars["i"]) != fmt.Sprint(i) {
					errs <- fmt.Errorf("w%d get after %d: %v %v", w, i, got, err)
					return
				}
				l, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
				if err != nil || len(l) != step {
					errs <- fmt.Errorf("w%d ledger after %d: %d records, want %d, %v", w, i, len(l), step, err)
					return
				}
				for k, rec := range l {
					if rec.Seq != int64(k+1) || rec.StepID != fmt.Sprint("s", k+1) {
						errs <- fmt.Errorf("w%d ledger after %d: rec %d = seq %d %s", w, i, k, rec.Seq, rec.StepID)
						return
					}
				}
				due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: base.Add(50 * time.Second), Limit: 100})
				if err != nil {
					errs <- err
					return
				}
				wantDue := r.Status == durable.RunWaiting && !r.Waiting.Until.After(base.Add(50*time.Second))
				gotDue := false
				for _, d := range due {
					gotDue = gotDue || d.RunID == id
				}
				if gotDue != wantDue {
					errs <- fmt.Errorf("w%d due after %d: %v want %v", w, i, gotDue, wantDue)
					return
				}
			}
			errs <- nil
		}(w)
	}
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			_, _ = s.RunList(ctx, &store.RunListParams{Limit: 10})
			time.Sleep(time.Millisecond)
		}
	}()
	for w := 0; w < W; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-done
}
