package runtime_test

// Shared helpers of the host-API fuzz targets (host_*_fuzz_test.go):
// a runtime on the in-memory or the JSON-file store, fuzzed vars decoded
// from JSON with Go values a caller could pass injected, and the checks
// every target makes of the run it leaves (stored state, ledger, export).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

type fzEnv struct {
	rt   *runtime.Runtime
	st   store.Store
	file *jsonfile.Store // nil on the in-memory store
	root string          // temp dir holding the JSON-file store's "data" dir
	data string
	reg  *runtime.Registry
}

func fzNode(f func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return f(run), nil
	}
}

// fzWorkflows: "echo" completes at once; "ask" waits on ASK_USER then
// completes with the answer; "evt" waits on WAIT_EVENT ping (session
// scope) then completes with the event.
func fzWorkflows(evtName, evtScope string) []*runtime.Workflow {
	return []*runtime.Workflow{
		{ID: "echo", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": fzNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"n": int64(len(run.Vars))})
			}),
		}},
		{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": fzNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "Continue?"}, ResultKey: "answer"}, "done")
			}),
			"done": fzNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"answer": run.Vars["answer"]})
			}),
		}},
		{ID: "evt", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": fzNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
					Payload: map[string]any{"name": evtName, "scope": evtScope}, ResultKey: "evt"}, "done")
			}),
			"done": fzNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"evt": run.Vars["evt"]})
			}),
		}},
	}
}

func fzNewEnv(t testing.TB, useFile bool, wfs ...*runtime.Workflow) *fzEnv {
	t.Helper()
	if len(wfs) == 0 {
		wfs = fzWorkflows("ping", "session")
	}
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	e := &fzEnv{reg: reg}
	if useFile {
		e.root = t.TempDir()
		e.data = filepath.Join(e.root, "data")
		e.file, err = jsonfile.New(jsonfile.Config{Dir: e.data, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		fs := e.file
		t.Cleanup(func() { _ = fs.Close() })
		e.st = e.file
	} else {
		e.st = memory.New()
	}
	e.rt, err = runtime.New(runtime.Config{Store: e.st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// reopen closes the JSON-file store and opens its directory again with a
// new runtime (what a restart sees); a no-op on the in-memory store.
func (e *fzEnv) reopen(t testing.TB) {
	t.Helper()
	if e.file == nil {
		return
	}
	if err := e.file.Close(); err != nil {
		t.Fatalf("closing the JSON-file store: %v", err)
	}
	var err error
	e.file, err = jsonfile.New(jsonfile.Config{Dir: e.data, NoSync: true})
	if err != nil {
		t.Fatalf("reopening the JSON-file store: %v", err)
	}
	fs := e.file
	t.Cleanup(func() { _ = fs.Close() })
	e.st = e.file
	e.rt, err = runtime.New(runtime.Config{Store: e.st, Registry: e.reg})
	if err != nil {
		t.Fatal(err)
	}
}

// checkConfined requires that the JSON-file store wrote nothing outside
// its data dir: the temp dir holds only "data", and nothing under it is a
// symlink.
func (e *fzEnv) checkConfined(t testing.TB, what string) {
	t.Helper()
	if e.file == nil {
		return
	}
	ents, err := os.ReadDir(e.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		if d.Name() != "data" {
			t.Fatalf("%s: the JSON-file store wrote %q outside its data dir", what, d.Name())
		}
	}
	_ = filepath.WalkDir(e.data, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeSymlink != 0 {
			t.Fatalf("%s: symlink %s in the data dir", what, p)
		}
		return nil
	})
}

func fzCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fzDecodeObject decodes data as a JSON object with numbers kept as
// json.Number; another JSON value is wrapped as {"v": value}; text that is
// not JSON gives nil.
func fzDecodeObject(data []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"v": v}
}

type fzStringer struct{ S string }

// fzInject puts at m[key] (a nested key when kind says so) a Go value a
// host could pass. It returns the key path of the injected value as an
// error would name it (root + "." + key ...) and whether the value is
// certainly not JSON (must be refused).
func fzInject(m map[string]any, root, key string, kind uint8) (path string, bad bool) {
	path = root + "." + key
	switch kind % 20 {
	case 0:
		return "", false
	case 1:
		m[key] = math.NaN()
		return path, true
	case 2:
		m[key] = math.Inf(1)
		return path, true
	case 3:
		m[key] = float32(math.Inf(-1))
		return path, true
	case 4:
		m[key] = map[string]any{"inner": []any{1.5, math.NaN()}}
		return path + ".inner[1]", true
	case 5:
		m[key] = map[string]int{"a": 1, "b": -2}
	case 6:
		m[key] = []string{"x", "", "z"}
	case 7:
		m[key] = json.Number("1e999")
	case 8:
		m[key] = json.Number("not-a-number")
	case 9:
		m[key] = new(big.Int).Lsh(big.NewInt(1), 100)
	case 10:
		m[key] = make(chan int)
		return path, true
	case 11:
		m[key] = uint64(math.MaxUint64)
	case 12:
		m[key] = int64(math.MinInt64)
	case 13:
		m[key] = map[int]any{7: "seven"}
	case 14:
		m[key] = []any{map[string]any{"deep": []any{map[string]float64{"f": math.Inf(-1)}}}}
		return path + "[0].deep[0].f", true
	case 15:
		m[key] = &fzStringer{S: "s"}
	case 16:
		m[key] = func() {}
		return path, true
	case 17:
		m[key] = float32(0.1)
	case 18:
		m[key] = errors.New("an error value")
		return path, true
	case 19:
		m[key] = []byte("bytes")
	}
	return path, false
}

func fzCanon(t testing.TB, v any) string {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Canonical)
	if err != nil {
		t.Fatalf("canonical encoding of %#v: %v", v, err)
	}
	return string(b)
}

// fzState reads the run through the store; it must be there.
func fzState(t testing.TB, e *fzEnv, id string) *durable.RunState {
	t.Helper()
	run, err := e.st.RunGet(context.Background(), id)
	if err != nil {
		t.Fatalf("reading run %q back through the store: %v", id, err)
	}
	if run.RunID != id {
		t.Fatalf("run %q read back as run %q", id, run.RunID)
	}
	return run
}

// fzCheckLedger requires run's ledger well-formed for its status: every
// record of the run; a terminal run ends with exactly one terminal status
// record (its last), a live one has none; a running run left by a host
// call is refused (the caller says when that is allowed).
func fzCheckLedger(t testing.TB, e *fzEnv, run *durable.RunState) []*durable.StepRecord {
	t.Helper()
	recs, err := e.rt.GetLedger(context.Background(), run.RunID)
	if err != nil {
		t.Fatalf("ledger of run %q: %v", run.RunID, err)
	}
	terminal := 0
	for i, r := range recs {
		if r.RunID != run.RunID {
			t.Fatalf("ledger of run %q: record %d is of run %q", run.RunID, i, r.RunID)
		}
		if r.Seq != int64(i+1) {
			t.Fatalf("ledger of run %q: record %d has seq %d, want %d", run.RunID, i, r.Seq, i+1)
		}
		if runtime.IsTerminalStatusRecord(r) {
			terminal++
			if r.IdempotencyKey != runtime.TerminalStatusKey(run.Status) {
				t.Fatalf("run %q is %s but its terminal record is %q", run.RunID, run.Status, r.IdempotencyKey)
			}
		}
	}
	if run.Status.Terminal() {
		if terminal != 1 || !runtime.IsTerminalStatusRecord(recs[len(recs)-1]) {
			t.Fatalf("run %q is %s: %d terminal records, last %+v; want exactly one, last", run.RunID, run.Status, terminal, recs[len(recs)-1])
		}
	} else if terminal != 0 {
		t.Fatalf("run %q is %s with %d terminal records", run.RunID, run.Status, terminal)
	}
	return recs
}

// fzExport exports the run: it must succeed, rooted at the run, with the
// run's ledger in full; or fail with an error naming the run.
func fzExport(t testing.TB, e *fzEnv, id string, nrecs int) {
	t.Helper()
	b, err := history.Export(context.Background(), history.Source{Runs: e.st, Ledger: e.st}, id,
		history.Options{LedgerMode: history.LedgerFull, IncludeSession: true})
	if err != nil {
		t.Fatalf("export of run %q: %v", id, err)
	}
	if b["root_run_id"] != id {
		t.Fatalf("export of run %q rooted at %v", id, b["root_run_id"])
	}
	ledgers, _ := b["ledgers"].(map[string]any)
	sec, _ := ledgers[id].(map[string]any)
	items, _ := sec["items"].([]any)
	if sec == nil || len(items) != nrecs {
		t.Fatalf("export of run %q: ledger section %v holds %d records, want %d", id, sec != nil, len(items), nrecs)
	}
}
