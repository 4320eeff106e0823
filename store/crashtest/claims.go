package crashtest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// Decorate stacks a process's store decorators (offload, hash chain…)
// over the backend's store st, with arts as the artifact store: the
// killable ones in the life that is killed, so that a decorator's own
// writes (an offloaded value) are persistence points too. nil stacks
// none.
type Decorate func(st store.Store, arts artifact.Store) store.Store

// noterMemo is the large value of the noter scenario: above the offload
// threshold of the decorated stacks, so it goes to the artifact store in
// the charge's payload, its result and the run's output.
var noterMemo = strings.Repeat("memo ", 40)

// noterSession is the session of the noter run: its session-scoped note
// goes to the session's memory owner run.
const noterSession = "crash-sess"

// noterWorkflows: a MEMORY_NOTE kept in the run's context, a charge with
// a large payload and result, a sync child (claimed in turn), a note
// into the session's memory owner run, then completion.
func noterWorkflows() []*runtime.Workflow {
	n := planNode
	noter := &runtime.Workflow{ID: "crash_noter", Entry: "note", Nodes: map[string]runtime.NodeFunc{
		"note": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote,
				Payload: map[string]any{"note": "remember A", "keep_in_context": true}, ResultKey: "n1"}, "charge")
		}),
		"charge": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge",
				Payload: map[string]any{"amount": int64(3), "memo": noterMemo}, ResultKey: "receipt"}, "child")
		}),
		"child": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload:   map[string]any{"workflow_id": "crash_child", "vars": map[string]any{"n": int64(2)}},
				ResultKey: "sub"}, "session")
		}),
		"session": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote,
				Payload: map[string]any{"note": "remember B", "scope": "session"}, ResultKey: "n2"}, "done")
		}),
		"done": n(func(run *durable.RunState) runtime.StepPlan {
			receipt, _ := run.Vars["receipt"].(map[string]any)
			sub, _ := run.Vars["sub"].(map[string]any)
			return runtime.Complete(map[string]any{"receipt": receipt["id"], "memo": receipt["memo"],
				"child": sub["output"], "spans": int64(len(memorySpans(run))), "notes": int64(contextNotes(run))})
		}),
	}}
	return append(workflows(), noter)
}

// noterClock is a life's clock: it starts at a life's own time and ticks
// a millisecond per reading, so that times stay ordered.
type noterClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *noterClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// noterTTL is the claim TTL of every life. It is long, so that neither
// the renewals nor the local expiry of a claim (both on the wall clock)
// happen during a test, and the points stay the same from run to run; a
// restart is a life's clock later than the dead owner's claims expire.
const noterTTL = time.Hour

var noterT0 = time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)

// noterRuntime builds life's runtime (from 1) over st and arts: it claims
// runs as owner "life-<life>" when st has claims, and its clock starts
// life × 2 TTL after the first life's, so that the claims a dead life
// left have expired. Its "charge" handler calls executed and echoes the
// payload's memo.
func noterRuntime(st store.Store, arts artifact.Store, life int, executed func(key string)) (*runtime.Runtime, error) {
	reg, err := runtime.NewRegistry(noterWorkflows()...)
	if err != nil {
		return nil, err
	}
	var claims *runtime.Claims
	if store.HasClaims(st) {
		claims = &runtime.Claims{Owner: fmt.Sprint("life-", life), TTL: noterTTL, RenewEvery: noterTTL / 3}
	}
	clock := &noterClock{now: noterT0.Add(time.Duration(life-1) * 2 * noterTTL)}
	return runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts, Claims: claims,
		Clock: clock.Now, Logger: slog.New(slog.DiscardHandler),
		Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			executed(req.IdempotencyKey)
			res := map[string]any{"id": fmt.Sprintf("rcpt-%v", req.Effect.Payload["amount"])}
			if memo, ok := req.Effect.Payload["memo"]; ok {
				res["memo"] = memo
			}
			return runtime.Completed(res), nil
		}}}})
}

// claimScenarios are the workflows RunClaimsArtifacts drives: the noter,
// and Run's scenarios, whose resume of a person's answer and parent woken
// by its async child take claims of their own.
var claimScenarios = []string{"crash_noter", "crash_parent", "crash_fanout"}

// RunClaimsArtifacts drives its scenarios (the noter's memory notes, a
// value large enough to offload and a child run; Run's scenarios) through
// a kill at every persistence point — commits, appends, run claims and
// releases when the backend has claims, and artifact writes — then
// restarts as another claim owner once the dead one's claims expired,
// and checks Run's invariants plus: no artifact ref in the final durable
// runs or ledgers dangles. decorate stacks the decorators of the process
// over the killable store and artifact store (nil: none); workflows
// picks some of the scenarios (none: all).
func RunClaimsArtifacts(t *testing.T, backend Backend, decorate Decorate, workflows ...string) {
	if decorate == nil {
		decorate = func(st store.Store, _ artifact.Store) store.Store { return st }
	}
	if len(workflows) == 0 {
		workflows = claimScenarios
	}
	for _, wf := range workflows {
		t.Run(wf, func(t *testing.T) { runClaimsScenario(t, backend, decorate, wf) })
	}
}

func runClaimsScenario(t *testing.T, backend Backend, decorate Decorate, workflowID string) {
	ctx := context.Background()
	const runID = "crash-run"
	open := backend(t)
	st, closeFn := open(t)
	log := &effectLog{calls: map[string]int{}}
	probe := Wrap(st, -1, Before)
	probeArts := WrapArtifacts(artifact.NewMemory(), probe)
	want, err := claimsLife(ctx, decorate(probe, probeArts), probeArts, 1, workflowID, runID, log.add)
	if err != nil {
		t.Fatalf("clean run: %v", err)
	}
	kinds := probe.Kinds()
	children := len(runIDs(ctx, t, st, runID)) - 1
	closeFn()
	checkOncePerLife(t, "clean run", log, nil)
	if want.Status != durable.RunCompleted {
		t.Fatalf("clean run ended %s: %s", want.Status, want.Error)
	}
	t.Logf("%d persistence points: %s", len(kinds), strings.Join(kinds, " "))
	for point, kind := range kinds {
		phases := []Phase{Before, After}
		if kind == "commit" && !store.IsAtomic(st) {
			phases = append(phases, Between)
		}
		for _, phase := range phases {
			t.Run(fmt.Sprintf("kill-%02d-%s-%s", point, kind, phase), func(t *testing.T) {
				checkClaimsKill(t, backend, decorate, workflowID, runID, point, phase, want, children)
			})
		}
	}
}

// claimsLife is one life of the data: it starts (or finds) the run and
// drives it to its end.
func claimsLife(ctx context.Context, st store.Store, arts artifact.Store, life int, workflowID, runID string, executed func(string)) (*durable.RunState, error) {
	rt, err := noterRuntime(st, arts, life, executed)
	if err != nil {
		return nil, err
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, RunID: runID, SessionID: noterSession}); err != nil {
		return nil, err
	}
	return drive(ctx, rt, runID)
}

func checkClaimsKill(t *testing.T, backend Backend, decorate Decorate, workflowID, runID string, point int, phase Phase, want *durable.RunState, children int) {
	ctx := context.Background()
	open := backend(t)
	log := &effectLog{calls: map[string]int{}}
	arts := artifact.NewMemory() // outlives the process, as the data does

	st, closeFn := open(t)
	killer := Wrap(st, point, phase)
	killArts := WrapArtifacts(arts, killer)
	_, _ = claimsLife(ctx, decorate(killer, killArts), killArts, 1, workflowID, runID, log.add)
	if !killer.Dead() {
		t.Fatalf("the kill at point %d never happened", point)
	}
	closeFn()
	atKill := checkOncePerLife(t, "life before the kill", log, nil)

	st, closeFn = open(t)
	defer closeFn()
	done := durableEffects(ctx, t, st, allRuns(ctx, t, st), log)

	// Second life: another owner, once the dead one's claims expired.
	got, err := claimsLife(ctx, decorate(st, arts), arts, 2, workflowID, runID, log.add)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	checkRestarted(ctx, t, st, runID, got, want, children, done, log)
	checkOncePerLife(t, "life after the restart", log, atKill)
	if workflowID == "crash_noter" {
		owner, err := st.RunGet(ctx, runtime.SessionMemoryRunID(noterSession))
		if err != nil {
			t.Fatalf("session memory owner: %v", err)
		}
		if n := len(memorySpans(owner)); n != 1 {
			t.Errorf("session memory owner holds %d spans, want 1", n)
		}
	}
	checkNoDanglingRefs(ctx, t, st, arts)
}

// allRuns lists the id of every run in st.
func allRuns(ctx context.Context, t *testing.T, st store.Store) []string {
	t.Helper()
	runs, err := st.RunList(ctx, &store.RunListParams{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	return ids
}

// checkNoDanglingRefs checks that every artifact the durable runs and
// ledgers of st name exists in arts: offloaded values ({"$artifact": id})
// and memory spans (their artifact_id).
func checkNoDanglingRefs(ctx context.Context, t *testing.T, st store.Store, arts artifact.Store) {
	t.Helper()
	for _, id := range allRuns(ctx, t, st) {
		run, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		where := map[string]string{}
		collectRefs(map[string]any{"vars": run.Vars, "output": run.Output}, "run "+id, where)
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			var payload any
			if r.Effect != nil {
				payload = r.Effect.Payload
			}
			collectRefs(map[string]any{"payload": payload, "result": r.Result},
				fmt.Sprintf("run %s record %d (%s)", id, r.Seq, r.NodeID), where)
		}
		for ref, at := range where {
			ok, err := arts.Exists(ctx, ref)
			if err != nil || !ok {
				t.Errorf("%s names artifact %s, which does not exist (%v)", at, ref, err)
			}
		}
	}
}

// collectRefs adds to refs the artifact ids v names, each with where it
// was first seen.
func collectRefs(v any, at string, refs map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["$artifact"].(string); ok {
			if _, seen := refs[id]; !seen {
				refs[id] = at
			}
		}
		if id, ok := x["artifact_id"].(string); ok && x["kind"] == "memory_note" {
			if _, seen := refs[id]; !seen {
				refs[id] = at
			}
		}
		for _, e := range x {
			collectRefs(e, at, refs)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, at, refs)
		}
	}
}

// memorySpans returns the run's memory span index.
func memorySpans(run *durable.RunState) []any {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	l, _ := rt["memory_spans"].([]any)
	return l
}

// contextNotes counts the memory notes kept in the run's context.
func contextNotes(run *durable.RunState) int {
	c, _ := run.Vars["context"].(map[string]any)
	msgs, _ := c["messages"].([]any)
	n := 0
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		md, _ := mm["metadata"].(map[string]any)
		if md["kind"] == "memory_note" {
			n++
		}
	}
	return n
}
