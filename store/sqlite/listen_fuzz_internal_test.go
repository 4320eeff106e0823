package sqlite

import (
	"math/rand"
	"path/filepath"
	"slices"
	"testing"
)

// interleavingSeeds is how many random sequences the test plays: each
// takes some 50 ms, thirty times that under the race detector.
func interleavingSeeds() int {
	if raceEnabled {
		return 4
	}
	return 60
}

// Random sequences of own and foreign appends and deletes over a few runs,
// with one or two listeners: every foreign write is heard (or covered by
// a wake-up of every run) and no own write is.
func TestListenRandomInterleavingsOfOwnAndForeignWrites(t *testing.T) {
	open, create, appendN, follow := listenHelpers(t)
	ctx := t.Context()
	for seed := range int64(interleavingSeeds()) {
		rng := rand.New(rand.NewSource(seed))
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		runs := []string{"r0", "r1", "r2", "r3"}
		for _, r := range runs {
			create(b, r, 0)
		}
		nlisteners := 1 + rng.Intn(2)
		var nexts []lookFunc
		for range nlisteners {
			n, _ := follow(a)
			nexts = append(nexts, n)
		}
		// per listener: what happened since its last look
		type pend struct {
			fApp, fDel map[string]bool
			ok         []string
		}
		pends := make([]pend, nlisteners)
		reset := func(i int) { pends[i] = pend{fApp: map[string]bool{}, fDel: map[string]bool{}} }
		for i := range pends {
			reset(i)
		}
		var trace []string
		for step := 0; step < 100; step++ {
			r := runs[rng.Intn(len(runs))]
			op := rng.Intn(6)
			if rng.Intn(150) == 0 {
				op = 6
			}
			switch op {
			case 0, 1:
				appendN(a, r, 1+rng.Intn(3))
				trace = append(trace, "a+"+r)
			case 2:
				if _, err := a.LedgerDelete(ctx, r); err != nil {
					t.Fatal(err)
				}
				trace = append(trace, "a-"+r)
				for i := range pends {
					delete(pends[i].fApp, r) // gone: nothing to read
				}
			case 3:
				appendN(b, r, 1+rng.Intn(3))
				trace = append(trace, "b+"+r)
				for i := range pends {
					pends[i].fApp[r] = true
					pends[i].ok = append(pends[i].ok, r)
				}
			case 4:
				n, err := b.LedgerDelete(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				trace = append(trace, "b-"+r)
				if n > 0 {
					for i := range pends {
						pends[i].fDel[r] = true
					}
				}
			case 6:
				// many foreign deletes: the log is trimmed
				insertForeignLedgers(t, b, "p", 10002)
				deleteForeignLedgers(t, b, "p")
				trace = append(trace, "bulk")
				for i := range pends {
					pends[i].fDel["p"] = true
					delete(pends[i].fApp, "p")
				}
			case 5:
				i := rng.Intn(nlisteners)
				got := nexts[i]()
				trace = append(trace, "look")
				p := pends[i]
				heard := map[string]bool{}
				for _, g := range got {
					heard[g] = true
				}
				anyDel := len(p.fDel) > 0
				for r := range p.fApp {
					if !heard[r] && !heard[""] && !heard["-"+r] && !heard["-"] {
						t.Fatalf("seed %d listener %d: missed foreign append to %s; heard %q; trace %v", seed, i, r, got, trace)
					}
				}
				for r := range p.fDel {
					if r == "p" {
						continue
					}
					if !heard["-"+r] && !heard["-"] {
						t.Fatalf("seed %d listener %d: missed foreign delete of %s; heard %q; trace %v", seed, i, r, got, trace)
					}
				}
				for _, g := range got {
					switch {
					case g == "" || g == "-":
						if !anyDel {
							t.Errorf("seed %d listener %d: wake %q without a foreign delete; trace %v", seed, i, g, trace)
						}
					case g[0] == '-':
						if !p.fDel[g[1:]] && !(len(g) > 1 && g[1] == 'p' && p.fDel["p"]) {
							t.Errorf("seed %d listener %d: own delete reported %q; heard %q; trace %v", seed, i, g, got, trace)
						}
					default:
						if !slices.Contains(p.ok, g) {
							t.Errorf("seed %d listener %d: own append reported %q; heard %q; trace %v", seed, i, g, got, trace)
						}
					}
				}
				reset(i)
			}
		}
		_ = a.Close()
		_ = b.Close()
		if t.Failed() {
			return
		}
	}
}
