package postgres_test

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// cutProxy forwards TCP connections to the test server. Once armed with
// a marker, it lets the next request that carries the marker through to
// the server, then drops the server's reply and closes that connection
// on both sides: the server has done what it was asked, its commit
// included, and the client never learns it ("commit outcome unknown",
// as when a connection dies between the server's COMMIT and its answer).
type cutProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	marker []byte // nil when not armed
	drop   bool   // drop the marked request itself (the server never sees it)
	conns  []net.Conn
	cuts   int

	silent    atomic.Bool // swallow everything both ways, closing nothing
	silenceAt []byte      // silence each connection from its first request carrying this on

	wg sync.WaitGroup
}

// newCutProxy starts a proxy and returns the test URL pointing at it.
func newCutProxy(t *testing.T) (*cutProxy, string) {
	t.Helper()
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: u.Host}
	u.Host = ln.Addr().String()
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p, u.String()
}

// arm makes the proxy cut the reply to the next request carrying marker.
func (p *cutProxy) arm(marker string) {
	p.mu.Lock()
	p.marker, p.drop = []byte(marker), false
	p.mu.Unlock()
}

// armDrop makes the proxy close the connection that sends the next
// request carrying marker, without passing it on: the write fails and
// nothing of it reaches the server.
func (p *cutProxy) armDrop(marker string) {
	p.mu.Lock()
	p.marker, p.drop = []byte(marker), true
	p.mu.Unlock()
}

// silence makes the proxy swallow every byte both ways from now on
// without closing anything: a network path that drops packets silently.
func (p *cutProxy) silence() { p.silent.Store(true) }

// silenceOn makes the proxy swallow every byte of each connection both
// ways, closing nothing, from the first request on it that carries marker
// (that request included): a network path that starts dropping packets
// silently at that moment.
func (p *cutProxy) silenceOn(marker string) {
	p.mu.Lock()
	p.silenceAt = []byte(marker)
	p.mu.Unlock()
}

// cutCount returns how many replies were cut.
func (p *cutProxy) cutCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		var cutNext atomic.Bool    // this connection's next reply is to be dropped
		var connSilent atomic.Bool // this connection has carried the silenceOn marker
		p.wg.Add(2)
		go func() { // client to server
			defer p.wg.Done()
			defer s.Close()
			defer c.Close()
			buf := make([]byte, 256<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					p.mu.Lock()
					if p.silenceAt != nil && bytes.Contains(buf[:n], p.silenceAt) {
						connSilent.Store(true)
					}
					p.mu.Unlock()
				}
				if n > 0 && (p.silent.Load() || connSilent.Load()) {
					n = 0
				}
				if n > 0 {
					p.mu.Lock()
					drop := false
					if p.marker != nil && bytes.Contains(buf[:n], p.marker) {
						p.marker = nil
						if drop = p.drop; drop {
							p.cuts++
						} else {
							cutNext.Store(true)
						}
					}
					p.mu.Unlock()
					if drop {
						return
					}
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // server to client
			defer p.wg.Done()
			defer c.Close()
			defer s.Close()
			buf := make([]byte, 256<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 && (p.silent.Load() || connSilent.Load()) {
					n = 0
				}
				if n > 0 {
					if cutNext.Load() {
						p.mu.Lock()
						p.cuts++
						p.mu.Unlock()
						return
					}
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func (p *cutProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// proxiedStore opens a Store on schema whose connections go through a
// new cutProxy.
func proxiedStore(t *testing.T, schema string, cfg postgres.Config) (*postgres.Store, *cutProxy) {
	t.Helper()
	proxy, purl := newCutProxy(t)
	cfg.URL, cfg.Schema, cfg.Logger = purl, schema, testLogger(t)
	s, err := postgres.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, proxy
}

// parentOfAsyncChild runs a parent that starts an async child and waits
// on it (start_subworkflow async+wait), on a runner with a scheduler
// running, while arm (called in the child's only node, just before its
// terminal commit) arms the proxy for that commit, whose run_json
// carries marker. It returns the store read directly, the parent's id and
// the child's.
func parentOfAsyncChild(t *testing.T, marker string, arm func(p *cutProxy)) (*postgres.Store, string, string) {
	t.Helper()
	schema := testSchema(t)
	s, proxy := proxiedStore(t, schema, postgres.Config{MaxConns: 4})
	ctx := t.Context()
	var armOnce sync.Once
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true,
					"vars": map[string]any{"marker": marker}}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"done": true}), nil
		},
	}}
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			armOnce.Do(func() { arm(proxy) })
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(parent, child)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: s, Registry: reg, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 200 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sch.Stop)

	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatalf("tick of the parent: %v", err)
	}
	if proxy.cutCount() != 1 {
		t.Fatalf("the child's terminal commit was not cut (%d cuts); parent %s", proxy.cutCount(), st.Status)
	}
	direct := openSchema(t, schema)
	// Not runtime.WaitedChild(st): a commit whose answer was lost still
	// queues the parent's resume, so the parent may have moved on.
	children, err := direct.RunList(ctx, &store.RunListParams{ParentID: id})
	if err != nil || len(children) != 1 {
		t.Fatalf("children of %s: %d, %v; want one", id, len(children), err)
	}
	return direct, id, children[0].RunID
}

// waitResumed waits up to 20 s for the parent to leave its wait.
func waitResumed(t *testing.T, direct *postgres.Store, id string) bool {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p, err := direct.RunGet(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != durable.RunWaiting {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// TestParentOfChildWhoseEndCommitWasUnacknowledged: a parent waiting on
// an async child (start_subworkflow async+wait) is resumed when the child
// ends (runtime doc, docs/compatibility.md "parent waiting on a child").
// When the connection dies between the server's COMMIT of the child's
// terminal state and its answer, RunCommit reports an error although the
// child did end: the driver logs "follow-up failed" and never queues the
// parent's resume (afterTerminal runs only after a commit reported
// successful), and no later tick did it. The host's Tick of the parent
// returned without error, so the host had nothing to retry, and a single
// runner (no claims: the scheduler's Recover runs only at Start) left the
// parent waiting until the process restarted. Failed follow-ups are now
// retried (Runtime.RetryFollowUps, from the scheduler's loop).
func TestParentOfChildWhoseEndCommitWasUnacknowledged(t *testing.T) {
	testURL(t)
	const marker = "cut-child-end-7f3a"
	direct, id, childID := parentOfAsyncChild(t, marker, func(p *cutProxy) { p.arm(marker) })
	c, err := direct.RunGet(t.Context(), childID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != durable.RunCompleted {
		t.Fatalf("child %s is %s in the database; the test wants its end committed", childID, c.Status)
	}
	if !waitResumed(t, direct, id) {
		t.Errorf("child %s is completed in the database, but its parent %s still waits on it 20 s later, the runner and its scheduler running: "+
			"the child's terminal commit reported an error (its answer was lost), so the parent's resume was never queued, and nothing retries it", childID, id)
	}
}

// TestAsyncChildWhoseEndCommitFailed: the same with a terminal commit
// that fails outright (the connection dies before the server gets it, as
// the first write on each pooled connection does after the server dropped
// them): the child stays running at its last checkpoint, and the failure
// of its follow-up tick was only logged. Nothing drove the child again in
// a live single runner (the scheduler drives due runs and the runs its
// own drives left running; Recover only at Start), so the child never
// ended and its parent waited for good.
func TestAsyncChildWhoseEndCommitFailed(t *testing.T) {
	testURL(t)
	const marker = "drop-child-end-5b1e"
	direct, id, childID := parentOfAsyncChild(t, marker, func(p *cutProxy) { p.armDrop(marker) })
	c, err := direct.RunGet(t.Context(), childID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != durable.RunRunning {
		t.Fatalf("child %s is %s in the database; the test wants its end not committed", childID, c.Status)
	}
	if !waitResumed(t, direct, id) {
		c, _ = direct.RunGet(t.Context(), childID)
		t.Errorf("the terminal commit of async child %s failed once (a dead connection); 20 s later, the runner and its scheduler running, "+
			"the child is still %s and its parent %s still waits on it: the failed follow-up tick is not retried", childID, c.Status, id)
	}
}

// TestFollowerOfUnacknowledgedCommitIsWoken: observe promises
// its subscribers every record appended (a follower treats each event as
// a wake-up and reads from its cursor; notifyAppended even announces the
// records a failed write appended anyway), and over PostgreSQL Follow adds
// the appends of other processes. A commit whose answer is lost (the
// connection died between the server's COMMIT and its reply) did append
// its records, but falls between the two: the decorator sees an error and
// records without Seq, so it notifies nothing, and the NOTIFY the commit
// sent carries this Store's origin, which ListenLedger skips ("in-process
// followers hear of those from the store decorator"). A follower of the
// run (a gateway streaming it) was never told; when that commit was the
// run's terminal one, nothing else was ever appended to wake it. A failed
// write now wakes the run's followers.
func TestFollowerOfUnacknowledgedCommitIsWoken(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	s, proxy := proxiedStore(t, schema, postgres.Config{MaxConns: 4, NotifyAppends: true})
	obs := observe.Wrap(s)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	followed := startFollow(t, ctx, obs)
	defer func() { cancel(); <-followed }()

	r := testRun("r1")
	if err := obs.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	sub := obs.Subscribe("r1", 16)
	defer sub.Cancel()

	// The run's terminal commit; its answer is lost.
	const marker = "cut-terminal-91c2"
	r.Status = durable.RunCompleted
	r.Output = map[string]any{"m": marker}
	proxy.arm(marker)
	err := obs.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{testRecord("r1", "end")}})
	if err == nil || proxy.cutCount() != 1 {
		t.Fatalf("commit = %v with %d cuts; want the cut commit's error", err, proxy.cutCount())
	}
	n, lerr := openSchema(t, schema).LedgerCount(ctx, "r1")
	if lerr != nil || n != 1 {
		t.Fatalf("ledger of r1 holds %d records (%v); want the cut commit's record", n, lerr)
	}
	select {
	case ev := <-sub.C:
		t.Logf("follower woken: %+v", ev)
	case <-time.After(5 * time.Second):
		t.Errorf("RunCommit reported %v, yet its record is in the ledger (seq %d); 5 s later the run's follower has had no event at all "+
			"(no records, no wake-up): it never learns of the run's terminal record", err, n)
	}
}
