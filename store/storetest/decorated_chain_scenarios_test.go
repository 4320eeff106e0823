package storetest_test

// The decorators stacked as the spec stacks them (observe, offload, hash
// chain) over every backend: chains verify after concurrent appends and
// commits, a delete and new appends, a reopen; values that canonical JSON
// must write as Python does (odd floats, big integers, escapes).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

func oddValues(i int) map[string]any {
	return map[string]any{
		"f1": 1e16, "f2": math.Copysign(0, -1), "f3": 1.5e-7, "f4": 1.0, "n": json.Number("1.50"),
		"i": int64(9007199254740993), "u": uint64(math.MaxUint64), "e": map[string]any{"": map[string]any{}, "l": []any{}},
		"k\"\\\n\u2028<&>": "é😀\x00\x7f", "i#": i,
	}
}

func oddRecord(run string, i int, big bool) *durable.StepRecord {
	res := oddValues(i)
	if big {
		res["content"] = strings.Repeat("x", 300)
	}
	now := durable.NewTime(time.Now())
	return &durable.StepRecord{RunID: run, StepID: fmt.Sprintf("s%d", i), NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now, Attempt: 1, Result: res,
		Effect: &durable.Effect{Type: "llm_call", Payload: map[string]any{"p": strings.Repeat("y", i%3*100), "x": 1.0}}}
}

type decoratedBackend struct {
	name string
	open func(t *testing.T, dir string) store.Store
}

// openFresh opens the backend in a new directory (memory: a new store),
// closed when the test ends.
func (b decoratedBackend) openFresh(t *testing.T) store.Store {
	if b.open == nil {
		return memory.New()
	}
	st := b.open(t, t.TempDir())
	t.Cleanup(func() { st.Close() })
	return st
}

func decoratedBackends() []decoratedBackend {
	return []decoratedBackend{
		{"memory", nil},
		{"jsonfile", func(t *testing.T, dir string) store.Store {
			s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"sqlite-shared", func(t *testing.T, dir string) store.Store {
			s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "db.sqlite3"), Shared: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"sqlite-noredo-nocache", func(t *testing.T, dir string) store.Store {
			s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "db.sqlite3"), NoRedoLog: true, CacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"jsonfile-nocache", func(t *testing.T, dir string) store.Store {
			s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true, CacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"sqlite", func(t *testing.T, dir string) store.Store {
			s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "db.sqlite3")})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
}

func wantChainVerifies(t *testing.T, st store.Store, run string, want int) {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: run})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != want {
		t.Errorf("%d records, want %d", len(recs), want)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		b, _ := json.Marshal(rep)
		t.Errorf("chain does not verify: %s", b)
	}
}

// The stacked decorators over each backend keep a chain that verifies
// through concurrent appends and commits, a delete, a reopen.
func TestDecoratedChainScenarios(t *testing.T) {
	ctx := context.Background()
	for _, b := range decoratedBackends() {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			arts := artifact.NewMemory()
			var backend store.Store
			if b.open == nil {
				backend = memory.New()
			} else {
				backend = b.open(t, dir)
			}
			stack := func(inner store.Store) store.Store {
				return observe.Wrap(offload.Wrap(hashchain.Wrap(inner), arts, offload.Config{MaxInlineBytes: 128}))
			}
			st := stack(backend)
			run := &durable.RunState{RunID: "run-1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
			if err := st.RunCommit(ctx, &store.CommitParams{Create: true, Run: run, Records: []*durable.StepRecord{oddRecord("run-1", 0, true), oddRecord("run-1", 1, false)}}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			n := 2
			for g := 0; g < 2; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 10; i++ {
						if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{oddRecord("run-1", 100*g+i, i%2 == 0)}); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 5; i++ {
					if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{oddRecord("run-1", 500+i, true), oddRecord("run-1", 600+i, false)}}); err != nil {
						t.Error(err)
					}
				}
			}()
			wg.Wait()
			n += 20 + 10
			wantChainVerifies(t, backend, "run-1", n)
			// delete, then append again
			if _, err := st.LedgerDelete(ctx, "run-1"); err != nil {
				t.Fatal(err)
			}
			if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{oddRecord("run-1", 1000, true), oddRecord("run-1", 1001, false)}); err != nil {
				t.Fatal(err)
			}
			run.Status = durable.RunCompleted
			run.Output = map[string]any{"big": strings.Repeat("z", 400)}
			if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{oddRecord("run-1", 1002, true)}}); err != nil {
				t.Fatal(err)
			}
			wantChainVerifies(t, backend, "run-1", 3)
			if b.open != nil {
				if err := backend.Close(); err != nil {
					t.Fatal(err)
				}
				backend = b.open(t, dir)
				defer backend.Close()
				st = stack(backend)
				wantChainVerifies(t, backend, "run-1", 3)
				if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{oddRecord("run-1", 2000, true), oddRecord("run-1", 2001, false)}); err != nil {
					t.Fatal(err)
				}
				wantChainVerifies(t, backend, "run-1", 5)
			}
		})
	}
}
