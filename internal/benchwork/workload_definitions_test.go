package benchwork

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestWorkflowGraphsAreTheREADMEs checks the exact graphs of the
// README's "Workloads (exact, for a 1:1 Go re-implementation)": workflow
// ids, entries and node ids (W1 n0..n9, W2 ask/done, W3 and W3b
// wait/done).
func TestWorkflowGraphsAreTheREADMEs(t *testing.T) {
	var steps atomic.Int64
	want := map[string]struct {
		entry string
		nodes []string
	}{
		"bench_w1_chain": {"n0", []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}},
		"bench_w2_ask":   {"ask", []string{"ask", "done"}},
		"bench_w3_past":  {"wait", []string{"done", "wait"}},
		"bench_w3_due":   {"wait", []string{"done", "wait"}},
	}
	got := map[string]*runtime.Workflow{}
	for _, wf := range Workflows(&steps) {
		got[wf.ID] = wf
	}
	if len(got) != len(want) {
		t.Fatalf("workflows %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for id, w := range want {
		wf := got[id]
		if wf == nil {
			t.Errorf("workflow %s missing", id)
			continue
		}
		if wf.Entry != w.entry {
			t.Errorf("%s: entry %s, want %s", id, wf.Entry, w.entry)
		}
		if nodes := slices.Sorted(maps.Keys(wf.Nodes)); !slices.Equal(nodes, w.nodes) {
			t.Errorf("%s: nodes %v, want %v", id, nodes, w.nodes)
		}
	}
}

// effectOf returns the effect of the first ledger record of node that
// has one.
func effectOf(t *testing.T, env *Env, runID, node string) *durable.Effect {
	t.Helper()
	recs, err := env.Runtime.GetLedger(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.NodeID == node && r.Effect != nil {
			return r.Effect
		}
	}
	t.Fatalf("run %s: no record of node %s carries an effect", runID, node)
	return nil
}

// pyISO is Python's datetime.now(timezone.utc).isoformat().
var pyISO = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)

// TestEffectPayloads checks the README's effects: W2 ASK_USER
// {"prompt": "Continue?"} into "answer"; W3 WAIT_UNTIL {"until":
// "2000-01-01T00:00:00+00:00"} into "woke"; W3b WAIT_UNTIL with until =
// now_utc + 250 ms computed when the wait node runs, written as Python's
// isoformat (microseconds, +00:00), into "woke".
func TestEffectPayloads(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)

	o2, err := RunW2(ctx, env, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := effectOf(t, env, o2.RunIDs[0], "ask")
	if e.Type != durable.EffectAskUser || e.ResultKey != "answer" || len(e.Payload) != 1 || e.Payload["prompt"] != "Continue?" {
		t.Errorf("w2 effect %s %v into %q", e.Type, e.Payload, e.ResultKey)
	}

	o3, err := RunW3Past(ctx, env, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	e = effectOf(t, env, o3.RunIDs[0], "wait")
	if e.Type != durable.EffectWaitUntil || e.ResultKey != "woke" || len(e.Payload) != 1 || e.Payload["until"] != "2000-01-01T00:00:00+00:00" {
		t.Errorf("w3 effect %s %v into %q", e.Type, e.Payload, e.ResultKey)
	}

	// W3b: phase A only, by hand, to see the deadline against the clock.
	before := time.Now()
	id, err := env.Runtime.Start(ctx, runtime.StartParams{WorkflowID: WorkflowW3Due})
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.Runtime.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("w3b: status %s after tick, want waiting (until)", st.Status)
	}
	e = effectOf(t, env, id, "wait")
	until, _ := e.Payload["until"].(string)
	if e.Type != durable.EffectWaitUntil || e.ResultKey != "woke" || len(e.Payload) != 1 || !pyISO.MatchString(until) {
		t.Fatalf("w3b effect %s %v into %q", e.Type, e.Payload, e.ResultKey)
	}
	u, err := time.Parse(time.RFC3339Nano, until)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := before.Add(DueDelay).Add(-time.Microsecond), after.Add(DueDelay).Add(time.Microsecond)
	if u.Before(lo) || u.After(hi) {
		t.Errorf("w3b until %s not within now+250ms of the tick [%s, %s]", until, lo.UTC().Format(time.RFC3339Nano), hi.UTC().Format(time.RFC3339Nano))
	}
	if !st.Waiting.Until.Equal(u) {
		t.Errorf("w3b wait until %v, effect until %s", st.Waiting.Until, until)
	}
}

// TestW3DueThousandRunsElevenCycles checks the README's W3b
// arithmetic: "N=1000 → 11 cycles (10 with work, 1 empty)" and "W3b also
// costs 11 list_due_wait_until queries per 1000 runs"; 0 immediate
// fallbacks; phase_a + phase_b = seconds.
func TestW3DueThousandRunsElevenCycles(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 250 ms")
	}
	ctx := context.Background()
	env := memoryEnv(t)
	out, err := RunW3Due(ctx, env, 1000, &Stopwatch{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Cycles != 11 || out.ImmediateFallbacks != 0 {
		t.Errorf("%d cycles, %d immediate fallbacks; want 11 and 0", out.Cycles, out.ImmediateFallbacks)
	}
	if n := out.Ops.Ops[OpRunListDue]; n != 11 {
		t.Errorf("%d due listings in the timed phases, want 11", n)
	}
	if out.PhaseA+out.PhaseB != out.Elapsed {
		t.Errorf("phase A %v + phase B %v != %v", out.PhaseA, out.PhaseB, out.Elapsed)
	}
	if _, err := Verify(ctx, env, out); err != nil {
		t.Fatal(err)
	}
}
