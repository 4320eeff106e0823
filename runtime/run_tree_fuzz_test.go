package runtime_test

// Model-based fuzz target of the kernel's run-tree control: a root run
// that starts up to three children (sync, async, async+wait), children
// that may start a grandchild, nodes that call a host handler which
// blocks until released, fails N times then succeeds, or fails for good,
// under a retry policy the fuzzer picks; and a program of host operations
// (Tick, release, Cancel, Pause, ResumeRun, Resume with the right or a
// stale key, restart) made in goroutines and checked after each step.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

const rtHostEffect durable.EffectType = "tree_host"

// Handler behaviours.
const (
	rtOK = iota
	rtBlock
	rtFailN
	rtFailPerm
)

type rtSpec struct {
	behaviour int
	failN     int
	ask       bool
	mode      int   // how its parent starts it: 0 sync, 1 async, 2 async+wait
	children  []int // workflow indexes it starts
}

type rtCallKey struct{}

// rtPark is one handler attempt blocked until released or cancelled.
type rtPark struct {
	runID    string
	attempt  int
	call     int
	release  chan struct{}
	returned bool
	released bool // the model closed release
	sawCtx   bool // returned because its context ended
	cause    error
}

type rtCall struct {
	id   int
	what string
	done bool
	err  error
	st   *durable.RunState
}

type rtModel struct {
	t      *testing.T
	specs  []rtSpec
	policy runtime.EffectPolicy
	maxAtt int
	st     store.Store
	rt     *runtime.Runtime
	reg    *runtime.Registry
	clock  *runtimetest.Clock
	root   string

	mu     sync.Mutex
	parks  []*rtPark
	calls  []*rtCall
	hcalls map[string]int // handler attempts per run
	wg     sync.WaitGroup

	terminal map[string]durable.RunStatus // runs seen terminal, with their status
}

func rtWorkflowID(i int) string { return fmt.Sprintf("w%d", i) }

func (m *rtModel) workflows() []*runtime.Workflow {
	var wfs []*runtime.Workflow
	for i, sp := range m.specs {
		nodes := map[string]runtime.NodeFunc{}
		order := []string{}
		for j := range sp.children {
			order = append(order, fmt.Sprintf("start%d", j))
		}
		if sp.ask {
			order = append(order, "ask")
		}
		order = append(order, "host", "done")
		for k, name := range order {
			next := ""
			if k+1 < len(order) {
				next = order[k+1]
			}
			switch {
			case strings.HasPrefix(name, "start"):
				c := sp.children[k]
				payload := map[string]any{"workflow_id": rtWorkflowID(c)}
				switch m.specs[c].mode {
				case 1:
					payload["async"] = true
				case 2:
					payload["async"] = true
					payload["wait"] = true
				}
				nodes[name] = fzNode(func(*durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
						Payload: payload, ResultKey: "sub_" + name}, next)
				})
			case name == "ask":
				nodes[name] = fzNode(func(*durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
						Payload: map[string]any{"prompt": "go?"}, ResultKey: "answer"}, next)
				})
			case name == "host":
				nodes[name] = fzNode(func(*durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: rtHostEffect,
						Payload: map[string]any{}, ResultKey: "host"}, next)
				})
			default:
				nodes[name] = fzNode(func(*durable.RunState) runtime.StepPlan {
					return runtime.Complete(map[string]any{"ok": true})
				})
			}
		}
		wfs = append(wfs, &runtime.Workflow{ID: rtWorkflowID(i), Entry: order[0], Nodes: nodes})
	}
	return wfs
}

func (m *rtModel) handler(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
	var idx int
	fmt.Sscanf(req.Run.WorkflowID, "w%d", &idx)
	sp := m.specs[idx]
	m.mu.Lock()
	m.hcalls[req.Run.RunID]++
	m.mu.Unlock()
	switch sp.behaviour {
	case rtBlock:
		if req.Attempt > 1 {
			return runtime.Completed(map[string]any{"attempt": req.Attempt}), nil
		}
		call, _ := ctx.Value(rtCallKey{}).(int)
		p := &rtPark{runID: req.Run.RunID, attempt: req.Attempt, call: call, release: make(chan struct{})}
		m.mu.Lock()
		m.parks = append(m.parks, p)
		m.mu.Unlock()
		select {
		case <-p.release:
			m.mu.Lock()
			p.returned = true
			m.mu.Unlock()
			return runtime.Completed(map[string]any{"released": true}), nil
		case <-ctx.Done():
			m.mu.Lock()
			p.returned, p.sawCtx, p.cause = true, true, context.Cause(ctx)
			m.mu.Unlock()
			return runtime.Outcome{}, ctx.Err()
		}
	case rtFailN:
		if req.Attempt <= sp.failN {
			return runtime.Failed(fmt.Sprintf("transient %d", req.Attempt)), nil
		}
		return runtime.Completed(map[string]any{"attempt": req.Attempt}), nil
	case rtFailPerm:
		return runtime.Failed("permanent"), nil
	}
	return runtime.Completed(map[string]any{}), nil
}

func (m *rtModel) newRuntime() {
	var err error
	m.rt, err = runtime.New(runtime.Config{
		Store: m.st, Registry: m.reg, Policy: m.policy, Clock: m.clock.Now,
		Handlers: map[durable.EffectType]runtime.Handler{rtHostEffect: {Func: m.handler}},
		Sleep: func(ctx context.Context, d time.Duration) error {
			if err := context.Cause(ctx); err != nil {
				return err
			}
			m.clock.Advance(d) // a fake clock: back-offs take no wall time
			return nil
		},
	})
	if err != nil {
		m.t.Fatal(err)
	}
}

// launch runs f in a goroutine as call number n, its context carrying n.
func (m *rtModel) launch(what string, f func(ctx context.Context) (*durable.RunState, error)) *rtCall {
	m.mu.Lock()
	c := &rtCall{id: len(m.calls) + 1, what: what}
	m.calls = append(m.calls, c)
	m.mu.Unlock()
	ctx := context.WithValue(context.Background(), rtCallKey{}, c.id)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		st, err := f(ctx)
		m.mu.Lock()
		c.done, c.err, c.st = true, err, st
		m.mu.Unlock()
	}()
	return c
}

// settle waits until every call has returned or is blocked in a handler
// of ours, or (a call waiting for the lock of a run another call holds
// while blocked in a handler) nothing has moved for 20 ms while some
// handler is blocked; a call that does neither for 10 s is a hang.
func (m *rtModel) settle(step string) {
	deadline := time.Now().Add(10 * time.Second)
	last, lastAt := -1, time.Now()
	for {
		m.mu.Lock()
		ok, anyParked := true, false
		progress := len(m.parks)
		for _, p := range m.parks {
			if !p.returned && !p.released {
				anyParked = true
			}
			if p.returned {
				progress++
			}
		}
		for _, c := range m.calls {
			if c.done {
				progress++
				continue
			}
			parked := false
			for _, p := range m.parks {
				if p.call == c.id && !p.returned && !p.released {
					parked = true
				}
			}
			if !parked {
				ok = false
			}
		}
		m.mu.Unlock()
		if ok {
			return
		}
		if progress != last {
			last, lastAt = progress, time.Now()
		} else if anyParked && time.Since(lastAt) > 20*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("%s: a call neither returned nor blocked in a handler for 10 s (a hang): %s", step, m.describe())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func (m *rtModel) describe() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, c := range m.calls {
		fmt.Fprintf(&b, "\n call %d %s done=%v err=%v", c.id, c.what, c.done, c.err)
	}
	for _, p := range m.parks {
		fmt.Fprintf(&b, "\n park run=%s call=%d returned=%v ctx=%v", p.runID, p.call, p.returned, p.sawCtx)
	}
	for _, id := range m.runIDs() {
		run, err := m.st.RunGet(context.Background(), id)
		if err == nil {
			fmt.Fprintf(&b, "\n run %s (%s) %s node=%s paused=%v waited=%q busy=%v", id, run.WorkflowID, run.Status,
				run.CurrentNode, runtime.IsPaused(run), runtime.WaitedChild(run), m.rt.Busy(id))
		}
	}
	return b.String()
}

func (m *rtModel) outstanding() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		if !c.done {
			n++
		}
	}
	return n
}

// runIDs lists the tree from the root, breadth first.
func (m *rtModel) runIDs() []string {
	ids := []string{m.root}
	for i := 0; i < len(ids); i++ {
		kids, err := m.st.RunListChildren(context.Background(), ids[i], "")
		if err != nil {
			m.t.Fatalf("children of %s: %v", ids[i], err)
		}
		for _, k := range kids {
			ids = append(ids, k.RunID)
		}
	}
	return ids
}

func (m *rtModel) subtree(id string) []string {
	ids := []string{id}
	for i := 0; i < len(ids); i++ {
		kids, _ := m.st.RunListChildren(context.Background(), ids[i], "")
		for _, k := range kids {
			ids = append(ids, k.RunID)
		}
	}
	return ids
}

func (m *rtModel) state(id string) *durable.RunState {
	run, err := m.st.RunGet(context.Background(), id)
	if err != nil {
		m.t.Fatalf("run %s: %v", id, err)
	}
	return run
}

func (m *rtModel) ledger(id string) []*durable.StepRecord {
	recs, err := m.rt.GetLedger(context.Background(), id)
	if err != nil {
		m.t.Fatalf("ledger of %s: %v", id, err)
	}
	return recs
}

type rtSnap struct {
	status durable.RunStatus
	nrecs  int
	paused bool
	calls  int
}

func (m *rtModel) snapshot() map[string]rtSnap {
	s := map[string]rtSnap{}
	for _, id := range m.runIDs() {
		run := m.state(id)
		m.mu.Lock()
		n := m.hcalls[id]
		m.mu.Unlock()
		s[id] = rtSnap{status: run.Status, nrecs: len(m.ledger(id)), paused: runtime.IsPaused(run), calls: n}
	}
	return s
}

// check asserts the invariants after a settled step.
func (m *rtModel) check(step string, before map[string]rtSnap) {
	t := m.t
	quiet := m.outstanding() == 0
	for _, id := range m.runIDs() {
		run := m.state(id)
		if was, ok := m.terminal[id]; ok && run.Status != was {
			t.Fatalf("%s: run %s was %s and is now %s%s", step, id, was, run.Status, m.describe())
		}
		if run.Status.Terminal() {
			m.terminal[id] = run.Status
		}
		// The ledger: seqs 1..n, one terminal record, last, matching.
		recs := m.ledger(id)
		terminal := 0
		for i, r := range recs {
			if r.Seq != int64(i+1) {
				t.Fatalf("%s: run %s record %d has seq %d", step, id, i, r.Seq)
			}
			if runtime.IsTerminalStatusRecord(r) {
				terminal++
				if r.IdempotencyKey != runtime.TerminalStatusKey(run.Status) {
					t.Fatalf("%s: run %s is %s with terminal record %q", step, id, run.Status, r.IdempotencyKey)
				}
			}
		}
		if run.Status.Terminal() && (terminal != 1 || !runtime.IsTerminalStatusRecord(recs[len(recs)-1])) {
			t.Fatalf("%s: run %s is %s with %d terminal records (want one, last)%s", step, id, run.Status, terminal, m.describe())
		}
		if !run.Status.Terminal() && terminal != 0 {
			t.Fatalf("%s: run %s is %s with %d terminal records", step, id, run.Status, terminal)
		}
		// Attempts of the host effect: 1..k, k within the policy; none
		// after a cancelled one; one handler call per started record.
		var attempts []int
		cancelledAt := -1
		for i, r := range recs {
			if r.Effect == nil || r.Effect.Type != rtHostEffect {
				continue
			}
			if r.Status == durable.StepStarted {
				if cancelledAt >= 0 {
					t.Fatalf("%s: run %s: host attempt %d started (record %d) after an attempt recorded cancelled (record %d)",
						step, id, r.Attempt, i, cancelledAt)
				}
				attempts = append(attempts, r.Attempt)
			}
			if r.Status == durable.StepCancelled {
				cancelledAt = i
			}
		}
		for i, a := range attempts {
			if a != i+1 {
				t.Fatalf("%s: run %s host attempts %v, want 1..n", step, id, attempts)
			}
		}
		if len(attempts) > m.maxAtt {
			t.Fatalf("%s: run %s host attempts %v past the policy's %d", step, id, attempts, m.maxAtt)
		}
		m.mu.Lock()
		nc := m.hcalls[id]
		m.mu.Unlock()
		if nc != len(attempts) {
			t.Fatalf("%s: run %s: handler called %d times, %d started records (%v)", step, id, nc, len(attempts), attempts)
		}
		// A paused run is run by nothing.
		if b, ok := before[id]; ok && b.paused && runtime.IsPaused(run) && b.calls != nc {
			t.Fatalf("%s: paused run %s had its handler called (%d -> %d)", step, id, b.calls, nc)
		}
		if quiet {
			if run.Status == durable.RunRunning {
				t.Fatalf("%s: run %s left running with nothing ticking it%s", step, id, m.describe())
			}
			if c := runtime.WaitedChild(run); c != "" && !runtime.IsPaused(run) {
				if cr := m.state(c); cr.Status.Terminal() {
					t.Fatalf("%s: run %s still waits on child %s, which is %s%s", step, id, c, cr.Status, m.describe())
				}
			}
		}
	}
	// A blocked handler of a cancelled run must have been interrupted.
	m.mu.Lock()
	parks := append([]*rtPark(nil), m.parks...)
	m.mu.Unlock()
	for _, p := range parks {
		m.mu.Lock()
		returned, sawCtx, cause := p.returned, p.sawCtx, p.cause
		m.mu.Unlock()
		if sawCtx && !errors.Is(cause, runtime.ErrRunCancelled) {
			t.Fatalf("%s: handler of run %s saw its context end with cause %v, want ErrRunCancelled", step, p.runID, cause)
		}
		if sawCtx && quiet && m.state(p.runID).Status != durable.RunCancelled {
			t.Fatalf("%s: handler of run %s was cancelled, the run is %s%s", step, p.runID, m.state(p.runID).Status, m.describe())
		}
		if !returned && m.state(p.runID).Status.Terminal() {
			t.Fatalf("%s: handler of run %s still blocked, the run %s%s", step, p.runID, m.state(p.runID).Status, m.describe())
		}
	}
}

func rtDecodeShape(data []byte) (specs []rtSpec, policy runtime.EffectPolicy, maxAtt int, rest []byte) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	switch next() % 3 {
	case 0:
		policy, maxAtt = runtime.RetryPolicy{}, 1
	case 1:
		policy, maxAtt = runtime.RetryPolicy{DefaultAttempts: 3, Base: time.Second, Max: 4 * time.Second}, 3
	default:
		policy, maxAtt = runtime.NoRetry, 1
	}
	spec := func(mode int) rtSpec {
		b := next()
		return rtSpec{behaviour: int(b % 4), failN: int(b/4%3) + 1, ask: b&0x40 != 0, mode: mode}
	}
	specs = []rtSpec{spec(0)}
	nkids := int(next() % 4)
	for i := 0; i < nkids; i++ {
		b := next()
		specs = append(specs, spec(int(b%3)))
		ci := len(specs) - 1
		specs[0].children = append(specs[0].children, ci)
		if b&0x10 != 0 {
			gb := next()
			specs = append(specs, spec(int(gb%3)))
			specs[ci].children = append(specs[ci].children, len(specs)-1)
		}
	}
	return specs, policy, maxAtt, data
}

func rtPlay(t *testing.T, data []byte) {
	specs, policy, maxAtt, prog := rtDecodeShape(data)
	if len(prog) > 40 {
		prog = prog[:40]
	}
	m := &rtModel{t: t, specs: specs, policy: policy, maxAtt: maxAtt, st: memory.New(),
		clock: runtimetest.NewClock(runtimetest.DefaultStart), hcalls: map[string]int{},
		terminal: map[string]durable.RunStatus{}}
	var err error
	if m.reg, err = runtime.NewRegistry(m.workflows()...); err != nil {
		t.Fatal(err)
	}
	m.newRuntime()
	defer func() {
		// Release every blocked handler (new ones too, as the calls go
		// on); every call must return.
		done := make(chan struct{})
		go func() { m.wg.Wait(); close(done) }()
		deadline := time.After(20 * time.Second)
		for {
			m.mu.Lock()
			for _, p := range m.parks {
				if !p.returned && !p.released {
					p.released = true
					close(p.release)
				}
			}
			m.mu.Unlock()
			select {
			case <-done:
				return
			case <-deadline:
				t.Fatalf("calls still running 20 s after every handler was released: %s", m.describe())
			case <-time.After(time.Millisecond):
			}
		}
	}()
	if m.root, err = m.rt.Start(context.Background(), runtime.StartParams{WorkflowID: "w0"}); err != nil {
		t.Fatal(err)
	}
	// A started run is running until ticked: the first tick is the host's.
	m.launch("first tick", func(ctx context.Context) (*durable.RunState, error) {
		return m.rt.Tick(ctx, m.root, runtime.TickOptions{})
	})
	m.settle("first tick")
	m.check("first tick", nil)
	for i := 0; i+1 < len(prog); i += 2 {
		op, arg := prog[i]%8, int(prog[i+1])
		ids := m.runIDs()
		target := ids[arg%len(ids)]
		before := m.snapshot()
		quietBefore := m.outstanding() == 0
		step := fmt.Sprintf("step %d", i/2)
		switch op {
		case 0: // Tick
			if m.rt.Busy(target) {
				continue
			}
			step += " tick " + target
			m.launch(step, func(ctx context.Context) (*durable.RunState, error) {
				return m.rt.Tick(ctx, target, runtime.TickOptions{})
			})
		case 1: // release a blocked handler
			m.mu.Lock()
			var open []*rtPark
			for _, p := range m.parks {
				if !p.returned && !p.released {
					open = append(open, p)
				}
			}
			if len(open) > 0 {
				p := open[arg%len(open)]
				step += " release " + p.runID
				p.released = true
				close(p.release)
			}
			m.mu.Unlock()
		case 2: // Cancel
			step += " cancel " + target
			tree := m.subtree(target)
			live := map[string]bool{}
			for _, id := range tree {
				if !m.state(id).Status.Terminal() {
					live[id] = true
				}
			}
			c := m.launch(step, func(ctx context.Context) (*durable.RunState, error) {
				return m.rt.Cancel(ctx, target, "fuzz")
			})
			m.settle(step)
			m.mu.Lock()
			done, cerr := c.done, c.err
			m.mu.Unlock()
			if !done {
				// Only legitimately in a handler of a run outside the
				// tree: a parent the child's cancelled end resumed and
				// the call drives on (its tree is committed by then).
				m.mu.Lock()
				inHandler := false
				for _, p := range m.parks {
					if p.call == c.id && !p.returned {
						inHandler = true
						if slices.Contains(tree, p.runID) {
							m.mu.Unlock()
							t.Fatalf("%s: Cancel blocked in a handler of run %s of the cancelled tree%s", step, p.runID, m.describe())
						}
					}
				}
				m.mu.Unlock()
				if !inHandler {
					t.Fatalf("%s: Cancel held up behind another call's blocked handler%s", step, m.describe())
				}
			}
			if cerr != nil {
				t.Fatalf("%s: Cancel: %v%s", step, cerr, m.describe())
			}
			for id := range live {
				if st := m.state(id).Status; st != durable.RunCancelled {
					t.Fatalf("%s: run %s (live in the cancelled tree) is %s after Cancel returned%s", step, id, st, m.describe())
				}
			}
			// Descendants started since (none should be) are ended too.
			for _, id := range m.subtree(target) {
				if st := m.state(id).Status; !st.Terminal() {
					t.Fatalf("%s: run %s under cancelled %s is %s%s", step, id, target, st, m.describe())
				}
			}
		case 3: // Pause (of a busy run too: it stops the tick at its next step boundary)
			step += " pause " + target
			m.launch(step, func(ctx context.Context) (*durable.RunState, error) {
				return m.rt.Pause(ctx, target, "fuzz")
			})
		case 4: // ResumeRun
			if m.rt.Busy(target) {
				continue
			}
			step += " resume-run " + target
			c := m.launch(step, func(ctx context.Context) (*durable.RunState, error) {
				return m.rt.ResumeRun(ctx, target)
			})
			if !before[target].paused && quietBefore {
				m.settle(step)
				m.mu.Lock()
				cerr := c.err
				m.mu.Unlock()
				if cerr != nil {
					t.Fatalf("%s: ResumeRun of a run not paused: %v", step, cerr)
				}
				if after := m.snapshot()[target]; after != before[target] {
					t.Fatalf("%s: ResumeRun of a run not paused changed it: %+v -> %+v", step, before[target], after)
				}
			}
		case 5: // Resume with the run's own key (a person's answer)
			run := m.state(target)
			if m.rt.Busy(target) || run.Status != durable.RunWaiting || run.Waiting == nil ||
				run.Waiting.Reason != durable.WaitUser || runtime.IsPaused(run) {
				continue
			}
			key := run.Waiting.WaitKey
			step += " resume " + target
			m.launch(step, func(ctx context.Context) (*durable.RunState, error) {
				return m.rt.Resume(ctx, runtime.ResumeParams{RunID: target, WaitKey: key, Payload: map[string]any{"text": "yes"}})
			})
		case 6: // Resume with a stale key
			if m.rt.Busy(target) || !quietBefore {
				continue
			}
			step += " stale-resume " + target
			c := m.launch(step, func(ctx context.Context) (*durable.RunState, error) {
				return m.rt.Resume(ctx, runtime.ResumeParams{RunID: target, WaitKey: "stale:" + target, Payload: map[string]any{}})
			})
			m.settle(step)
			m.mu.Lock()
			done, cerr := c.done, c.err
			m.mu.Unlock()
			var stale *runtime.StaleResumeError
			if !done || cerr == nil || (!errors.As(cerr, &stale) && !errors.Is(cerr, runtime.ErrRunPaused)) {
				t.Fatalf("%s: stale resume: done=%v err=%v; want a StaleResumeError", step, done, cerr)
			}
			if after := m.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("%s: stale resume changed the tree: %v -> %v", step, before, after)
			}
		case 7: // restart
			if !quietBefore {
				continue
			}
			step += " restart"
			m.newRuntime()
			if after := m.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("%s: restart changed the tree: %v -> %v", step, before, after)
			}
		}
		m.settle(step)
		m.check(step, before)
	}
}

func FuzzRunTreeControl(f *testing.F) {
	// shape: policy, root spec, nkids, per kid: mode|grandchild flag, spec [, gspec]
	// program: (op, arg) pairs; op 0 tick, 1 release, 2 cancel, 3 pause,
	// 4 resume-run, 5 resume, 6 stale resume, 7 restart.
	f.Add([]byte{0, rtOK, 0, 0, 0})
	f.Add([]byte{1, rtFailN + 4, 0, 0, 0, 6, 0})               // fail once, retried
	f.Add([]byte{2, rtFailN, 0, 0, 0})                         // no retry
	f.Add([]byte{0, rtBlock, 0, 0, 0, 1, 0, 0, 0})             // block, release, tick
	f.Add([]byte{0, rtBlock, 0, 0, 0, 2, 0, 0, 0})             // block, cancel
	f.Add([]byte{0, rtOK, 1, 2, rtBlock, 0, 0, 2, 1, 1, 0})    // async+wait child blocks, cancel child
	f.Add([]byte{0, rtOK, 1, 0x10, rtOK, rtBlock, 0, 0, 2, 0}) // sync child, blocked grandchild, cancel root
	f.Add([]byte{1, rtOK, 2, 1, rtFailN + 8, 2, rtBlock, 0, 0, 3, 0, 1, 0, 4, 0})
	f.Add([]byte{0, 0x40, 0, 0, 0, 6, 0, 3, 0, 5, 0, 4, 0, 5, 0, 7, 0}) // ask, stale, pause, resume, restart
	f.Add([]byte{0, rtOK, 1, 2, 0x40, 0, 0, 3, 0, 5, 1, 4, 0})          // async+wait asking child, parent paused
	f.Add([]byte{1, rtOK, 3, 0, rtFailPerm, 1, rtBlock, 0x12, rtOK, rtBlock, 0, 0, 2, 3, 1, 0, 0, 0, 7, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rtPlay(t, data)
	})
}
