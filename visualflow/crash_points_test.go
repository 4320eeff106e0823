package visualflow

// VisualFlow runs under the crash harness (store/crashtest), on the
// memory, JSON-file and SQLite stores: every persistence point of a flow
// is killed in every phase, the process restarts on the same data and
// finishes the flow. Every run must end as in an uncrashed run (status,
// output, vars but for timings), with one terminal record, none left
// running, and no effect run twice for a completion already saved.
// Covered: the golden cases, the shared bundles and flows of loops,
// parallel waits, subflows, events and repeated agents. Knobs:
// VFC_SMALLSTEPS=1 (two steps a tick, so points fall between ordinary
// nodes), VFC_TICKING=1 (a clock that moves at every read; listeners may
// then differ from the clean run, as event delivery is only to runs
// waiting at that moment), VFC_ONLY=<case>, VFC_SHOW=1.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/crashtest"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// vfcWorld outlives a process: the effects done outside, the clock.
type vfcWorld struct {
	mu      sync.Mutex
	calls   map[string]int      // idempotency key → handler executions
	byNode  map[string][]string // run/node → keys in execution order
	memo    map[string]any      // key → result handed out
	scripts map[string][]any    // effect type → scripted results (golden cases)
	used    map[string]int      // effect type → scripted results handed out
	now     time.Time
	answers map[string]int // wait key@version → resume index
}

func newVFCWorld(scripts map[string][]any) *vfcWorld {
	return &vfcWorld{calls: map[string]int{}, byNode: map[string][]string{}, memo: map[string]any{},
		scripts: scripts, used: map[string]int{}, answers: map[string]int{}, now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (w *vfcWorld) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if vfcTicking {
		w.now = w.now.Add(time.Millisecond)
	}
	return w.now
}

var vfcTicking = os.Getenv("VFC_TICKING") != ""

func (w *vfcWorld) advance(to time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if to.After(w.now) {
		w.now = to.Add(time.Second)
	}
}

// handler serves effect type typ: a scripted result (the next one the
// first time a key is seen, the same one again for the same key) or, with
// no script, fn of the payload.
func (w *vfcWorld) handler(typ string, fn func(p map[string]any) any) runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		key := req.IdempotencyKey
		w.calls[key]++
		nk := req.Run.RunID + "/" + req.NodeID
		w.byNode[nk] = append(w.byNode[nk], key)
		if r, ok := w.memo[key]; ok {
			return runtime.Completed(pyjson.Clone(r)), nil
		}
		var r any
		if fn != nil {
			r = fn(req.Effect.Payload)
		} else {
			list := w.scripts[typ]
			i := w.used[typ]
			if i >= len(list) {
				return runtime.Failed("scripted handler: no result left"), nil
			}
			w.used[typ]++
			r = list[i]
		}
		w.memo[key] = r
		return runtime.Completed(pyjson.Clone(r)), nil
	}}
}

func (w *vfcWorld) count(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[key]
}

func (w *vfcWorld) keys() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for k := range w.calls {
		out[k] = true
	}
	return out
}

// vfcCase is a flow (or several) driven by a host.
type vfcCase struct {
	name      string
	workflows func(t *testing.T) []*runtime.Workflow
	scripts   map[string][]any
	fns       map[string]func(p map[string]any) any
	host      func(ctx context.Context, e *vfcEnv) error
	maxSteps  int // the runtime's steps per tick (default 100000)
}

type vfcEnv struct {
	w   *vfcWorld
	rt  *runtime.Runtime
	sch *scheduler.Scheduler
	st  store.Store
}

func vfcRuntime(t *testing.T, w *vfcWorld, st store.Store, c *vfcCase) *vfcEnv {
	t.Helper()
	reg, err := runtime.NewRegistry(c.workflows(t)...)
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[durable.EffectType]runtime.Handler{}
	types := map[string]bool{}
	for typ := range c.scripts {
		types[typ] = true
	}
	for typ := range c.fns {
		types[typ] = true
	}
	for typ := range types {
		handlers[durable.EffectType(typ)] = w.handler(typ, c.fns[typ])
	}
	maxSteps := 100000
	if c.maxSteps > 0 {
		maxSteps = c.maxSteps
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: handlers, MaxSteps: maxSteps,
		Clock: w.clock, Sleep: func(ctx context.Context, d time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	return &vfcEnv{w: w, rt: rt, sch: sch, st: st}
}

type vfcBackend struct {
	name  string
	fresh func(t *testing.T) func(t *testing.T) (store.Store, func())
}

func vfcBackends() []vfcBackend {
	return []vfcBackend{
		{"memory", func(t *testing.T) func(t *testing.T) (store.Store, func()) {
			st := memory.New()
			return func(t *testing.T) (store.Store, func()) { return st, func() {} }
		}},
		{"json", func(t *testing.T) func(t *testing.T) (store.Store, func()) {
			dir := t.TempDir()
			return func(t *testing.T) (store.Store, func()) {
				st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				return st, func() { st.Close() }
			}
		}},
		{"sqlite", func(t *testing.T) func(t *testing.T) (store.Store, func()) {
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			return func(t *testing.T) (store.Store, func()) {
				st, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
				if err != nil {
					t.Fatal(err)
				}
				return st, func() { st.Close() }
			}
		}},
	}
}

type vfcRun struct {
	Workflow string
	Status   durable.RunStatus
	Output   string
	Error    string
	Vars     string // without _runtime and at-least-once delivery details
}

func vfcDropVolatile(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"delivered", "delivered_to", "resumed", "duration_ms", "cpu_time_ms", "reused_prior_result", "ts", "emitted_at", "until", "updated_at", "created_at", "started_at"} {
			delete(x, k)
		}
		for _, e := range x {
			vfcDropVolatile(e)
		}
	case []any:
		for _, e := range x {
			vfcDropVolatile(e)
		}
	}
}

func vfcAllRuns(ctx context.Context, t *testing.T, st store.Store) []string {
	t.Helper()
	runs, err := st.RunList(ctx, &store.RunListParams{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	sort.Strings(ids)
	return ids
}

func vfcSnapshot(ctx context.Context, t *testing.T, st store.Store) map[string]vfcRun {
	t.Helper()
	out := map[string]vfcRun{}
	for _, id := range vfcAllRuns(ctx, t, st) {
		r, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		o := ""
		if r.Output != nil {
			v := any(r.Output)
			v = pyjson.Clone(v)
			scrubDurations(v)
			o = normJSON(t, v)
		}
		vars := pyjson.CloneObject(r.Vars)
		delete(vars, "_runtime")
		vfcDropVolatile(vars)
		out[id] = vfcRun{Workflow: r.WorkflowID, Status: r.Status, Output: o, Error: r.Error, Vars: normJSON(t, vars)}
	}
	return out
}

// vfcCheckLedgers: a terminal run has exactly one terminal record of its
// status; no run is left running; an effect key completed at most once.
func vfcCheckLedgers(ctx context.Context, t *testing.T, st store.Store, runs map[string]vfcRun) {
	t.Helper()
	for id, r := range runs {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		terminal := map[string]int{}
		done := map[string]int{}
		for _, rec := range recs {
			if s, ok := strings.CutPrefix(rec.IdempotencyKey, "system:terminal_status:"); ok {
				terminal[s]++
			} else if rec.Status == durable.StepCompleted && rec.IdempotencyKey != "" {
				done[rec.IdempotencyKey]++
			}
		}
		switch {
		case r.Status.Terminal():
			if terminal[string(r.Status)] != 1 || len(terminal) != 1 {
				t.Errorf("run %s (%s, %s): terminal records %v, want exactly one %s", id, r.Workflow, r.Status, terminal, r.Status)
			}
		case r.Status == durable.RunRunning:
			t.Errorf("run %s (%s) left running at the end of the flow", id, r.Workflow)
		}
		for k, n := range done {
			if n > 1 {
				t.Errorf("run %s: effect %s completed %d times in the ledger", id, k, n)
			}
		}
	}
}

func runVFCrash(t *testing.T, c *vfcCase) {
	for _, be := range vfcBackends() {
		t.Run(be.name, func(t *testing.T) { runVFCrashOn(t, c, be) })
	}
}

func runVFCrashOn(t *testing.T, c *vfcCase, be vfcBackend) {
	ctx := context.Background()
	open := be.fresh(t)
	st, closeFn := open(t)
	probe := crashtest.Wrap(st, -1, crashtest.Before)
	w := newVFCWorld(c.scripts)
	e := vfcRuntime(t, w, probe, c)
	if err := c.host(ctx, e); err != nil {
		closeFn()
		t.Fatalf("clean run: %v", err)
	}
	points := probe.Calls()
	want := vfcSnapshot(ctx, t, st)
	vfcCheckLedgers(ctx, t, st, want)
	wantKeys := w.keys()
	if os.Getenv("VFC_SHOW") != "" {
		t.Logf("clean: %v (%d points)", want, points)
	}
	closeFn()
	if t.Failed() {
		t.Fatalf("clean run fails the checks: %v", want)
	}
	phases := []crashtest.Phase{crashtest.Before, crashtest.After}
	if !store.IsAtomic(st) {
		phases = append(phases, crashtest.Between)
	}
	for point := 0; point < points; point++ {
		for _, phase := range phases {
			t.Run(fmt.Sprintf("kill-%02d-%s", point, phase), func(t *testing.T) {
				vfcCheckKill(t, c, open0(be, t), point, phase, want, wantKeys)
			})
		}
	}
}

func open0(be vfcBackend, t *testing.T) func(t *testing.T) (store.Store, func()) { return be.fresh(t) }

func vfcCheckKill(t *testing.T, c *vfcCase, open func(t *testing.T) (store.Store, func()), point int, phase crashtest.Phase,
	want map[string]vfcRun, wantKeys map[string]bool) {
	ctx := context.Background()
	w := newVFCWorld(c.scripts)
	st, closeFn := open(t)
	killer := crashtest.Wrap(st, point, phase)
	e := vfcRuntime(t, w, killer, c)
	_ = c.host(ctx, e)
	if !killer.Dead() {
		closeFn()
		t.Skipf("the kill at point %d never happened", point)
	}
	closeFn()

	st, closeFn = open(t)
	defer closeFn()
	durableDone := map[string]int{}
	for _, id := range vfcAllRuns(ctx, t, st) {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
				durableDone[r.IdempotencyKey] = w.count(r.IdempotencyKey)
			}
		}
	}
	e = vfcRuntime(t, w, st, c)
	if err := c.host(ctx, e); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	got := vfcSnapshot(ctx, t, st)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after restart the runs differ from the clean run: %s", vfcDiff(got, want))
	}
	for k, n := range durableDone {
		if c := w.count(k); c != n {
			t.Errorf("effect %s re-executed after its completion was durable (%d → %d)", k, n, c)
		}
	}
	for k := range w.keys() {
		if !wantKeys[k] {
			w.mu.Lock()
			var where []string
			for nk, ks := range w.byNode {
				for _, kk := range ks {
					if kk == k {
						where = append(where, nk)
					}
				}
			}
			w.mu.Unlock()
			t.Errorf("effect executed under key %s (at %v) that the clean run never used: a second execution under a new key", k, where)
		}
	}
	vfcCheckLedgers(ctx, t, st, got)
}

// ---------------------------------------------------------------------
// Hosts.
// ---------------------------------------------------------------------

// driveRoot starts root (idempotently), recovers and ticks it, answering
// its waits for a person or an event with resumes[k] (k: resumes applied
// so far), moving the clock past WAIT_UNTIL deadlines.
func driveRoot(ctx context.Context, e *vfcEnv, wf, root, session string, vars map[string]any, resumes []map[string]any) error {
	if vars == nil {
		vars = map[string]any{}
	}
	if _, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: root, SessionID: session, Vars: pyjson.CloneObject(vars)}); err != nil {
		return err
	}
	for range 400 {
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		st, err := e.rt.Tick(ctx, root, runtime.TickOptions{})
		if err != nil {
			return err
		}
		if st.Status.Terminal() {
			return nil
		}
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			continue
		}
		switch st.Waiting.Reason {
		case durable.WaitUntil:
			e.w.advance(st.Waiting.Until.Time)
		case durable.WaitUser, durable.WaitEvent:
			// The host remembers what it answered to which wait (the
			// wait key and the vars the run waits with): an answer that did not
			// land is given again, the next wait gets the next one.
			wk := st.Waiting.WaitKey + "@" + vfcText(st.Vars)
			e.w.mu.Lock()
			k, ok := e.w.answers[wk]
			if !ok {
				k = len(e.w.answers)
				e.w.answers[wk] = k
			}
			e.w.mu.Unlock()
			if k >= len(resumes) {
				return nil // left waiting, as the clean run
			}
			if _, err := e.rt.Resume(ctx, runtime.ResumeParams{RunID: root, WaitKey: st.Waiting.WaitKey, Payload: pyjson.CloneObject(resumes[k])}); err != nil {
				return err
			}
		}
	}
	return errors.New("the flow did not end")
}

// ---------------------------------------------------------------------
// Golden cases.
// ---------------------------------------------------------------------

func goldenCrashCase(t *testing.T, file string) (*vfcCase, bool) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in, want, _ := bytes.Cut(raw, []byte("\n---\n"))
	if bytes.Contains(want, []byte(`"compile_error"`)) || strings.Contains(file, "step_limit") {
		return nil, false
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	gc := goldenCase{Flow: doc}
	if _, isFlow := doc["nodes"]; !isFlow {
		gc = goldenCase{}
		b, _ := json.Marshal(doc)
		d2 := json.NewDecoder(bytes.NewReader(b))
		d2.UseNumber()
		if err := d2.Decode(&gc); err != nil {
			t.Fatal(err)
		}
	}
	raw2, _ := json.Marshal(gc)
	fresh := func(t *testing.T) goldenCase {
		var g goldenCase
		d := json.NewDecoder(bytes.NewReader(raw2))
		d.UseNumber()
		if err := d.Decode(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	var wfID string
	{
		wf, err := Compile(fresh(t).Flow, CompileOptions{})
		if err != nil {
			return nil, false
		}
		wfID = wf.ID
	}
	c := &vfcCase{name: strings.TrimSuffix(filepath.Base(file), ".txt"),
		scripts: fresh(t).Handlers,
		workflows: func(t *testing.T) []*runtime.Workflow {
			g := fresh(t)
			var wfs []*runtime.Workflow
			for _, f := range append([]map[string]any{g.Flow}, g.Subflows...) {
				wf, err := Compile(f, CompileOptions{})
				if err != nil {
					t.Fatal(err)
				}
				wfs = append(wfs, wf)
			}
			return wfs
		},
		host: func(ctx context.Context, e *vfcEnv) error {
			g := fresh(nil)
			return driveRoot(ctx, e, wfID, "vfc-root", "", g.Vars, g.Resumes)
		},
	}
	if c.scripts == nil {
		c.scripts = map[string][]any{}
	}
	return c, true
}

func TestCrashPointsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	only := os.Getenv("VFC_ONLY")
	for _, file := range files {
		if only != "" && !strings.Contains(file, only) {
			continue
		}
		c, ok := goldenCrashCase(t, file)
		if !ok {
			continue
		}
		if os.Getenv("VFC_SMALLSTEPS") != "" {
			c.maxSteps = 2
		}
		t.Run(c.name, func(t *testing.T) { runVFCrash(t, c) })
	}
}

// ---------------------------------------------------------------------
// Shared bundles.
// ---------------------------------------------------------------------

func bundleCrashCase(t *testing.T, name string, vars map[string]any) *vfcCase {
	b := sharedBundle(t, name)
	ep := b.Manifest.DefaultEntrypoint
	if ep == "" {
		ep = b.Manifest.Entrypoints[0].FlowID
	}
	wfID := bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, ep)
	return &vfcCase{name: name,
		fns: map[string]func(p map[string]any) any{
			"llm_call": func(p map[string]any) any {
				return map[string]any{"content": "reply:" + vfcText(p["prompt"]) + vfcText(p["messages"]),
					"provider": "p", "model": "m", "finish_reason": "stop"}
			},
			"tool_calls": func(p map[string]any) any {
				return map[string]any{"mode": "executed", "results": []any{}}
			},
		},
		workflows: func(t *testing.T) []*runtime.Workflow {
			cb, err := CompileBundle(sharedBundle(t, name), BundleOptions{ReactPlaceholders: true})
			if err != nil {
				t.Fatal(err)
			}
			return cb.Workflows
		},
		host: func(ctx context.Context, e *vfcEnv) error {
			return driveRoot(ctx, e, wfID, "vfc-root", "", vars, nil)
		},
	}
}

func TestCrashPointsBundles(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]any
	}{
		{"yoda@dev", map[string]any{"prompt": "Hello"}},
		{"basic@dev", map[string]any{"prompt": "Write hello world"}},
		{"test@dev", map[string]any{"prompt": "ls"}},
		{"basic-llm-test@0.0.0", map[string]any{"prompt": "ping", "provider": "lmstudio", "model": "m1", "system": "be brief",
			"temperature": 0.2, "seed": int64(7), "use_context": false, "tools": []any{"read_file"}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runVFCrash(t, bundleCrashCase(t, tc.name, tc.vars)) })
	}
}

func vfcText(v any) string {
	b, _ := pyjson.Marshal(v, pyjson.Style{SortKeys: true})
	return string(b)
}

// ---------------------------------------------------------------------
// Own fixtures.
// ---------------------------------------------------------------------

// vfcFns are deterministic effect results: a function of the payload.
var vfcFns = map[string]func(p map[string]any) any{
	"llm_call": func(p map[string]any) any {
		return map[string]any{"content": "llm(" + vfcText(p["prompt"]) + ")", "provider": "p", "model": "m", "finish_reason": "stop"}
	},
	"tool_calls": func(p map[string]any) any {
		calls, _ := p["tool_calls"].([]any)
		results := []any{}
		for _, c := range calls {
			m, _ := c.(map[string]any)
			results = append(results, map[string]any{"call_id": m["call_id"], "name": m["name"], "success": true,
				"output": "tool(" + vfcText(m["arguments"]) + ")", "error": nil})
		}
		return map[string]any{"mode": "executed", "results": results}
	},
}

// vfcDrive starts nothing; it recovers and ticks the roots until they
// end, answering every person's wait (not event listeners) with a
// function of its prompt and moving the clock past WAIT_UNTIL deadlines.
func vfcDrive(ctx context.Context, e *vfcEnv, roots ...string) error {
	for range 400 {
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		all := true
		for _, id := range roots {
			st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				return err
			}
			if !st.Status.Terminal() {
				all = false
			}
		}
		if all {
			return nil
		}
		runs, err := e.st.RunList(ctx, &store.RunListParams{Status: durable.RunWaiting, Limit: 1000})
		if err != nil {
			return err
		}
		for _, r := range runs {
			if runtime.IsPaused(r) || r.Waiting == nil {
				continue
			}
			switch r.Waiting.Reason {
			case durable.WaitUntil:
				e.w.advance(r.Waiting.Until.Time)
				if _, err := e.rt.Tick(ctx, r.RunID, runtime.TickOptions{}); err != nil {
					return err
				}
			case durable.WaitUser, durable.WaitEvent:
				if strings.HasPrefix(r.Waiting.WaitKey, "evt:") {
					continue // a listener
				}
				if _, err := e.rt.Resume(ctx, runtime.ResumeParams{RunID: r.RunID, WaitKey: r.Waiting.WaitKey,
					Payload: map[string]any{"response": "ans(" + r.Waiting.Prompt + ")", "kind": r.Waiting.WaitKey}}); err != nil {
					return err
				}
			}
		}
	}
	return errors.New("the flow did not end")
}

func vfcCompiled(flows ...map[string]any) func(t *testing.T) []*runtime.Workflow {
	raw, _ := json.Marshal(flows)
	return func(t *testing.T) []*runtime.Workflow {
		var fs []map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&fs); err != nil {
			t.Fatal(err)
		}
		var wfs []*runtime.Workflow
		for _, f := range fs {
			opts := CompileOptions{}
			if e, ok := f["_entry"].(string); ok {
				opts.WorkflowID, opts.EntryNode = f["_wf"].(string), e
				delete(f, "_entry")
				delete(f, "_wf")
			}
			wf, err := Compile(f, opts)
			if err != nil {
				t.Fatalf("compile %v: %v", f["id"], err)
			}
			wfs = append(wfs, wf)
		}
		return wfs
	}
}

func vfcSimple(name string, vars map[string]any, flows ...map[string]any) *vfcCase {
	root := flows[0]["id"].(string)
	return &vfcCase{name: name, fns: vfcFns, workflows: vfcCompiled(flows...),
		host: func(ctx context.Context, e *vfcEnv) error {
			if _, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: root, RunID: "vfc-root", Vars: pyjson.CloneObject(vars)}); err != nil {
				return err
			}
			return vfcDrive(ctx, e, "vfc-root")
		}}
}

// F1: for loop with an llm_call (outputKey), a code node and a set_var
// inside; then a while loop with tool_calls and a counter.
func vfcLoopsFlow() map[string]any {
	return rsFlow("vfc_loops", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("for", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
			[]string{"loop:exec", "done:exec", "i:number", "index:number"},
			map[string]any{"pinDefaults": map[string]any{"start": 0, "end": 3, "step": 1}}),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"},
			map[string]any{"outputKey": "last_llm", "pinDefaults": map[string]any{"provider": "p", "model": "m"}}),
		rsNode("code", "code", []string{"exec-in:exec", "r:string", "acc:array"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"functionName": "transform", "codeBody": "return (acc or []) + [r]"}),
		rsNode("acc", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("while", "while", []string{"exec-in:exec", "condition:boolean"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
		rsNode("gn", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "n"}}),
		rsNode("lt", "compare", []string{"a:any", "op:string", "b:any"}, []string{"result:boolean"}, map[string]any{"pinDefaults": map[string]any{"op": "<", "b": 2}}),
		rsNode("tp", "tool_parameters", []string{"text:string"}, []string{"tool_call:object", "text:string"},
			map[string]any{"toolParametersConfig": map[string]any{"tool": "echo"}}),
		rsNode("tc", "tool_calls", []string{"exec-in:exec", "tool_calls:any", "allowed_tools:array"}, []string{"exec-out:exec", "results:array", "success:boolean"},
			map[string]any{"pinDefaults": map[string]any{"allowed_tools": []any{"echo"}}}),
		rsNode("inc", "add", []string{"a:number", "b:number"}, []string{"result:number"}, map[string]any{"pinDefaults": map[string]any{"b": 1}}),
		rsNode("sn", "set_var", []string{"exec-in:exec", "name:string", "value:number"}, []string{"exec-out:exec", "value:number"},
			map[string]any{"pinDefaults": map[string]any{"name": "n"}}),
		rsNode("final", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("ll", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "last_llm"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "acc:array", "n:number", "results:array", "last_llm:any"}, nil, nil),
	},
		"start.exec-out>for.exec-in", "for.loop>llm.exec-in", "for.i>llm.prompt",
		"llm.exec-out>code.exec-in", "llm.response>code.r", "acc.value>code.acc",
		"code.exec-out>sv.exec-in", "code.output>sv.value",
		"for.done>while.exec-in", "gn.value>lt.a", "lt.result>while.condition",
		"while.loop>tc.exec-in", "gn.value>tp.text", "tp.tool_call>tc.tool_calls",
		"tc.exec-out>sn.exec-in", "gn.value>inc.a", "inc.result>sn.value",
		"while.done>end.exec-in", "final.value>end.acc", "gn.value>end.n", "tc.results>end.results", "ll.value>end.last_llm")
}

// F2: a parallel block whose branches wait (a person, a deadline), then
// an llm call once completed.
func vfcParallelFlow() map[string]any {
	return rsFlow("vfc_par", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("par", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec", "completed:exec"}, nil),
		rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "p0"}}),
		rsNode("sa", "set_var", []string{"exec-in:exec", "name:string", "value:string"}, []string{"exec-out:exec", "value:string"},
			map[string]any{"pinDefaults": map[string]any{"name": "a"}}),
		rsNode("wu", "wait_until", []string{"exec-in:exec", "duration:number"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"duration": 5}, "effectConfig": map[string]any{"durationType": "seconds"}}),
		rsNode("ask2", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "p1"}}),
		rsNode("sb", "set_var", []string{"exec-in:exec", "name:string", "value:string"}, []string{"exec-out:exec", "value:string"},
			map[string]any{"pinDefaults": map[string]any{"name": "b"}}),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"provider": "p", "model": "m"}}),
		rsNode("ga", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "a"}}),
		rsNode("gb", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "b"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "a:string", "b:string", "r:string"}, nil, nil),
	},
		"start.exec-out>par.exec-in", "par.then:0>ask.exec-in", "ask.exec-out>sa.exec-in", "ask.response>sa.value",
		"par.then:1>wu.exec-in", "wu.exec-out>ask2.exec-in", "ask2.exec-out>sb.exec-in", "ask2.response>sb.value",
		"par.completed>llm.exec-in", "ga.value>llm.prompt", "llm.exec-out>end.exec-in",
		"ga.value>end.a", "gb.value>end.b", "llm.response>end.r")
}

// F3: a for-each over items running a subflow per item (the child asks a
// person and calls the LLM), collecting outputs; then a sequence.
func vfcSubflowFlows() []map[string]any {
	parent := rsFlow("vfc_subp", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "items:array"}, nil),
		rsNode("loop", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
		rsNode("sub", "subflow", []string{"exec-in:exec", "q:string"}, []string{"exec-out:exec", "r:string", "output:object"},
			map[string]any{"subflowId": "vfc_subc"}),
		rsNode("acc", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("app", "array_append", []string{"array:array", "item:any"}, []string{"result:array"}, nil),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:array"}, []string{"exec-out:exec", "value:array"},
			map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		rsNode("s0", "set_var", []string{"exec-in:exec", "name:string", "value:string"}, []string{"exec-out:exec", "value:string"},
			map[string]any{"pinDefaults": map[string]any{"name": "x", "value": "X"}}),
		rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "seq"}}),
		rsNode("s1", "set_var", []string{"exec-in:exec", "name:string", "value:string"}, []string{"exec-out:exec", "value:string"},
			map[string]any{"pinDefaults": map[string]any{"name": "y"}}),
		rsNode("final", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "acc"}}),
		rsNode("gy", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "y"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "acc:array", "y:string"}, nil, nil),
	},
		"start.exec-out>loop.exec-in", "start.items>loop.items", "loop.loop>sub.exec-in", "loop.item>sub.q",
		"sub.exec-out>sv.exec-in", "acc.value>app.array", "sub.r>app.item", "app.result>sv.value",
		"loop.done>seq.exec-in", "seq.then:0>s0.exec-in", "seq.then:1>ask.exec-in", "ask.exec-out>s1.exec-in", "ask.response>s1.value",
		"final.value>end.acc", "gy.value>end.y")
	// The sequence ends by the control-return rule: give it an end via a
	// third branch.
	child := rsFlow("vfc_subc", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "q:string"}, nil),
		rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"}, nil),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"provider": "p", "model": "m"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string"}, nil, nil),
	},
		"start.exec-out>ask.exec-in", "start.q>ask.prompt", "ask.exec-out>llm.exec-in", "ask.response>llm.prompt",
		"llm.exec-out>end.exec-in", "llm.response>end.r")
	return []map[string]any{parent, child}
}

// F4: a root emitting events in a loop to an on_event listener (another
// run in the session) that calls the LLM and records what it saw.
func vfcEventsFlow() map[string]any {
	return rsFlow("vfc_ev", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "items:array"}, nil),
		rsNode("loop", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"}, nil),
		rsNode("emit", "emit_event", []string{"exec-in:exec", "payload:any"}, []string{"exec-out:exec", "delivered:number"},
			map[string]any{"effectConfig": map[string]any{"name": "ping"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
		rsNode("listen", "on_event", nil, []string{"exec-out:exec", "payload:object"}, map[string]any{"eventConfig": map[string]any{"name": "ping", "scope": "session"}}),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:any", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"}, map[string]any{"pinDefaults": map[string]any{"provider": "p", "model": "m"}}),
		rsNode("seen", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "seen"}}),
		rsNode("app", "array_append", []string{"array:array", "item:any"}, []string{"result:array"}, nil),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:array"}, []string{"exec-out:exec", "value:array"},
			map[string]any{"pinDefaults": map[string]any{"name": "seen"}}),
	},
		"start.exec-out>loop.exec-in", "start.items>loop.items", "loop.loop>emit.exec-in", "loop.item>emit.payload",
		"loop.done>end.exec-in",
		"listen.exec-out>llm.exec-in", "listen.payload>llm.prompt", "llm.exec-out>sv.exec-in",
		"seen.value>app.array", "llm.response>app.item", "app.result>sv.value")
}

func TestCrashPointsOwn(t *testing.T) {
	evFlow := vfcEventsFlow()
	listener := pyjson.CloneObject(evFlow)
	listener["_entry"], listener["_wf"] = "listen", "vfc_ev_listener"
	cases := []*vfcCase{
		vfcSimple("loops", map[string]any{"acc": []any{}, "n": int64(0)}, vfcLoopsFlow()),
		vfcSimple("parallel_waits", nil, vfcParallelFlow()),
		vfcSimple("subflow_loop", map[string]any{"items": []any{"a", "b"}, "acc": []any{}}, vfcSubflowFlows()...),
		{name: "events", fns: vfcFns, workflows: vfcCompiled(evFlow, listener),
			host: func(ctx context.Context, e *vfcEnv) error {
				if _, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "vfc_ev_listener", RunID: "vfc-listener", SessionID: "s1",
					Vars: map[string]any{"seen": []any{}}}); err != nil {
					return err
				}
				if err := e.sch.Recover(ctx); err != nil {
					return err
				}
				if _, err := e.rt.Tick(ctx, "vfc-listener", runtime.TickOptions{}); err != nil {
					return err
				}
				if _, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: "vfc_ev", RunID: "vfc-root", SessionID: "s1",
					Vars: map[string]any{"items": []any{"x", "y"}}}); err != nil {
					return err
				}
				return vfcDrive(ctx, e, "vfc-root")
			}},
	}
	if os.Getenv("VFC_SMALLSTEPS") != "" {
		for _, c := range cases {
			c.maxSteps = 2
		}
	}
	only := os.Getenv("VFC_ONLY")
	for _, c := range cases {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		t.Run(c.name, func(t *testing.T) { runVFCrash(t, c) })
	}
}

// vfcDiff names the runs and the JSON paths where got and want differ.
func vfcDiff(got, want map[string]vfcRun) string {
	var out []string
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			out = append(out, "run "+id+" missing")
			continue
		}
		if g.Status != w.Status || g.Error != w.Error {
			out = append(out, fmt.Sprintf("run %s: status %s %q, want %s %q", id, g.Status, g.Error, w.Status, w.Error))
		}
		for _, f := range [][3]string{{"output", g.Output, w.Output}, {"vars", g.Vars, w.Vars}} {
			if f[1] == f[2] {
				continue
			}
			var a, b any
			_ = json.Unmarshal([]byte(f[1]), &a)
			_ = json.Unmarshal([]byte(f[2]), &b)
			vfcPathDiff(id+"."+f[0], a, b, &out)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			out = append(out, "extra run "+id)
		}
	}
	return "\n" + strings.Join(out, "\n")
}

func vfcPathDiff(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			vfcPathDiff(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, ga, gb))
	}
}

// F5: a for loop whose llm_call sends the same payload every turn (the
// Python key repeats), then an agent with structured output in a loop.
func vfcRepeatAgentFlow() map[string]any {
	return rsFlow("vfc_rep", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("for", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
			[]string{"loop:exec", "done:exec", "i:number", "index:number"},
			map[string]any{"pinDefaults": map[string]any{"start": 0, "end": 3, "step": 1}}),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:string", "model:string"},
			[]string{"exec-out:exec", "response:string"},
			map[string]any{"outputKey": "last_llm", "pinDefaults": map[string]any{"prompt": "same", "provider": "p", "model": "m"}}),
		rsNode("cnt", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "n"}}),
		rsNode("inc", "add", []string{"a:number", "b:number"}, []string{"result:number"}, map[string]any{"pinDefaults": map[string]any{"b": 1}}),
		rsNode("sn", "set_var", []string{"exec-in:exec", "name:string", "value:number"}, []string{"exec-out:exec", "value:number"},
			map[string]any{"pinDefaults": map[string]any{"name": "n"}}),
		rsNode("loop2", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
			[]string{"loop:exec", "done:exec", "i:number", "index:number"},
			map[string]any{"pinDefaults": map[string]any{"start": 0, "end": 2, "step": 1}}),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string", "success:boolean", "data:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "task"}, "agentConfig": map[string]any{"provider": "p", "model": "m",
				"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "number"}}}}}}),
		rsNode("sa", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "agent_out"}}),
		rsNode("gl", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "last_llm"}}),
		rsNode("ga", "get_var", []string{"name:string"}, []string{"value:any"}, map[string]any{"pinDefaults": map[string]any{"name": "agent_out"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "n:number", "last:any", "agent:any"}, nil, nil),
	},
		"start.exec-out>for.exec-in", "for.loop>llm.exec-in", "llm.exec-out>sn.exec-in", "cnt.value>inc.a", "inc.result>sn.value",
		"for.done>loop2.exec-in", "loop2.loop>ag.exec-in", "ag.exec-out>sa.exec-in", "ag.data>sa.value",
		"loop2.done>end.exec-in", "cnt.value>end.n", "gl.value>end.last", "ga.value>end.agent")
}

func TestCrashPointsRepeatAgent(t *testing.T) {
	fns := map[string]func(p map[string]any) any{
		"llm_call": func(p map[string]any) any {
			if p["response_schema"] != nil {
				return map[string]any{"content": `{"k": 1}`, "data": map[string]any{"k": int64(1)}}
			}
			return vfcFns["llm_call"](p)
		},
	}
	flow := vfcRepeatAgentFlow()
	c := vfcSimple("repeat_agent", map[string]any{"n": int64(0)}, flow)
	c.fns = fns
	inner := c.workflows
	c.workflows = func(t *testing.T) []*runtime.Workflow {
		return append(inner(t), ReactPlaceholder(bundle.ReactWorkflowID("vfc_rep", "ag")))
	}
	if os.Getenv("VFC_SMALLSTEPS") != "" {
		c.maxSteps = 2
	}
	runVFCrash(t, c)
}
