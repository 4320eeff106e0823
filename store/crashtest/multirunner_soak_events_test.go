package crashtest

// An extension of the multi-runner soak (multirunner_soak_test.go),
// reusing its store, fleet, effect log and checks, with a workload aimed
// at what the soak's own exercises only by chance (events, fan-outs and
// pauses meeting several runners and kills, where follow-ups are refused
// and retried):
//
//   - ev_fan: a parent starting three listener children at once (two async
//     without wait, one async+wait), all released by one external event
//     the host emits while runners may hold them (runners' Recover,
//     follow-ups of the host, kills right after the wait's commit);
//   - ev_double: a listener released by two emitter runs started at once
//     (two runners deliver to it at the same moment: one wins, the other's
//     resume goes stale while it held the claim);
//   - ev_tree_pchild: the soak's tree, whose async+wait child the host
//     pauses for a while and lifts with ResumeRun (the child may be in a
//     slow charge, its timer, or past it; the parent waits on it);
//   - ev_listen_pause: a host-released listener paused and resumed
//     (ResumeRun) around its event (the host emits until it moves on);
//   - (no cancelled fan: Cancel of a fan whose parent already completed
//     cancels its async children still listening, as documented, which
//     soakCheck's "a child completes unless an ancestor was cancelled"
//     does not allow for);
//   - timers, trees paused at the parent, emitter-released listeners, as
//     in the soak.
//
// Runner processes are the soak's (TestMultiRunnerSoakRunnerProcess),
// told by envSoakEvents to register the extra workflows. Sizes as in the
// soak (SOAK_SEED, SOAK_RUNS, SOAK_RUNNERS, SOAK_SECONDS).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

const envSoakEvents = "CRASHTEST_SOAK_EVENTS" // set: a runner process registers this soak's workflows too

const (
	evFan         = "ev_fan"
	evDouble      = "ev_double"
	evTreePChild  = "ev_tree_pchild"
	evListenPause = "ev_listen_pause"
)

var evKindList = []string{evFan, evFan, evFan, evDouble, evDouble, evTreePChild, evTreePChild,
	evListenPause, evListenPause, kindTimer, kindTree, kindListenRun}

func evWorkflowOf(kind string) string {
	switch kind {
	case evFan:
		return "ev_fan"
	case evDouble, evListenPause:
		return "soak_listen"
	case evTreePChild:
		return "soak_tree"
	}
	return soakWorkflowOf(kind)
}

// evRefKind is the kind whose reference output a kind's completed run
// must give.
func evRefKind(kind string) string {
	switch kind {
	case evDouble, evListenPause:
		return kindListenExt
	case evTreePChild:
		return kindTree
	}
	return kind
}

func evWorkflows() []*runtime.Workflow {
	n := func(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return fn(run), nil
		}
	}
	charge := func(amount any, next, resultKey string) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: "charge", Payload: map[string]any{"amount": amount}, ResultKey: resultKey}, next)
	}
	rcpt := func(run *durable.RunState, key string) any {
		m, _ := run.Vars[key].(map[string]any)
		return m["id"]
	}
	spawn := func(nv int64, wait bool, next, key string) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
			Payload: map[string]any{"workflow_id": "ev_listen_child", "async": true, "wait": wait,
				"vars": map[string]any{"n": nv}},
			ResultKey: key}, next)
	}
	return []*runtime.Workflow{
		{ID: "ev_fan", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a":  n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(20), "s1", "a") }),
			"s1": n(func(run *durable.RunState) runtime.StepPlan { return spawn(21, false, "s2", "k1") }),
			"s2": n(func(run *durable.RunState) runtime.StepPlan { return spawn(22, false, "s3", "k2") }),
			"s3": n(func(run *durable.RunState) runtime.StepPlan { return spawn(23, true, "b", "k3") }),
			"b":  n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(24), "done", "b") }),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				k3, _ := run.Vars["k3"].(map[string]any)
				return runtime.Complete(map[string]any{"a": rcpt(run, "a"), "c": k3["output"], "b": rcpt(run, "b")})
			}),
		}},
		{ID: "ev_listen_child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(run.Vars["n"], "listen", "r") }),
			"listen": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
					Payload: map[string]any{"name": "go2", "scope": "session"}, ResultKey: "evt"}, "b")
			}),
			"b": n(func(run *durable.RunState) runtime.StepPlan {
				v, _ := runtime.AsInt(run.Vars["n"])
				return charge(v+500, "done", "r2")
			}),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				evt, _ := run.Vars["evt"].(map[string]any)
				payload, _ := evt["payload"].(map[string]any)
				return runtime.Complete(map[string]any{"r": rcpt(run, "r"), "value": payload["value"], "r2": rcpt(run, "r2")})
			}),
		}},
	}
}

// evReference: the outputs of the extra workflows on the memory store.
func evReference(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := soakReference(t)
	ctx := context.Background()
	st := memory.New()
	nop := func(*runtime.EffectRequest) {}
	rt, err := soakRuntime(st, nil, nil, nop, func(bool) time.Duration { return 0 }, nop, evWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ev_fan", RunID: "ref-fan", SessionID: "ref-sess-fan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, "ref-fan", runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go2", Scope: "session", SessionID: "ref-sess-fan",
		Payload: map[string]any{"value": "hello2"}})
	if err != nil || len(got) != 3 {
		t.Fatalf("reference fan: event delivered to %v, %v", got, err)
	}
	run, err := rt.GetState(ctx, "ref-fan")
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("reference fan: %v %v", run, err)
	}
	out[evFan] = run.Output
	return out
}

// evRun is a planned top-level run with this soak's extra host state.
type evRun struct {
	*soakRun
	emitters bool // evDouble: its two emitters were started
	// evTreePChild: the pause of its async+wait child.
	child          string
	childPausedAt  time.Time
	childPauseDone bool
	childPauseAt   time.Duration
	childPauseFor  time.Duration
}

func TestMultiRunnerSoakEvents(t *testing.T) { soakOnEachBackend(t, "evsoak", evSoak) }

func evSoak(t *testing.T, kind string, fresh func(suffix uint32) soakStore) {
	seed := rand.Uint64() >> 1
	if s := os.Getenv("SOAK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", s, err)
		}
		seed = v
	}
	def := soakDefaults[kind]
	runs := soakEnvInt(t, "SOAK_RUNS", def.runs)
	runners := soakEnvInt(t, "SOAK_RUNNERS", def.runners)
	soakFor := time.Duration(soakEnvInt(t, "SOAK_SECONDS", def.seconds)) * time.Second
	t.Logf("%s: seed %d, %d runs, %d runners, kills for %v", kind, seed, runs, runners, soakFor)
	rng := rand.New(rand.NewPCG(seed, 0x22eed))
	ref := evReference(t)
	want := map[string]map[string]any{"emit": ref["emit"]}
	for _, k := range append(slices.Clone(evKindList), kindListenExt) {
		want[k] = ref[evRefKind(k)]
	}

	ctx := context.Background()
	dir := t.TempDir()
	where := fresh(rng.Uint32())
	st, err := where.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	elog, err := openSoakEffectLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer elog.f.Close()
	hostLog, err := os.Create(filepath.Join(dir, "host.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer hostLog.Close()
	host, err := soakRuntime(st, soakClaimsFor("host"),
		slog.New(slog.NewTextHandler(hostLog, &slog.HandlerOptions{Level: slog.LevelWarn})).With("owner", "host"),
		elog.executed, soakDelay(seed), elog.returned, evWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	fleet := &soakFleet{t: t, dir: dir, store: where, env: []string{envSoakEvents + "=1"}, seed: seed, killed: map[string]int{},
		killedAt: map[int]time.Time{}, pids: map[int]string{os.Getpid(): "host"}}
	for i := range runners {
		fleet.start(i)
	}
	finished := false
	defer func() {
		if !finished {
			fleet.killAll()
		}
	}()

	plan := make([]*evRun, runs)
	for i := range plan {
		k := evKindList[rng.IntN(len(evKindList))]
		r := &evRun{soakRun: &soakRun{id: fmt.Sprintf("%s-%03d", k, i), kind: k, session: fmt.Sprintf("sess-%03d", i),
			startAt: time.Duration(rng.Int64N(int64(soakFor) * 85 / 100))}}
		switch k {
		case kindTree, kindTimer, evListenPause, evFan:
			r.pauseAt = time.Duration(1+rng.IntN(900)) * time.Millisecond
			r.pauseFor = time.Duration(rng.IntN(500)) * time.Millisecond
		case evTreePChild:
			r.childPauseAt = time.Duration(rng.IntN(900)) * time.Millisecond
			r.childPauseFor = time.Duration(rng.IntN(700)) * time.Millisecond
		}
		plan[i] = r
	}
	slices.SortFunc(plan, func(a, b *evRun) int { return cmp.Compare(a.startAt, b.startAt) })
	bySession := map[string]*evRun{}
	for _, r := range plan {
		bySession[r.session] = r
	}

	begin := time.Now()
	nextKill := time.Duration(200+rng.IntN(500)) * time.Millisecond
	kills, pauses, childPauses := 0, 0, 0
	deadline := begin.Add(soakFor + 3*time.Minute)
	next := 0
	var hostErrs []string
	hostErr := func(format string, args ...any) {
		if len(hostErrs) < 80 {
			hostErrs = append(hostErrs, fmt.Sprintf("%v: ", time.Since(begin).Round(time.Millisecond))+fmt.Sprintf(format, args...))
		}
	}
	for {
		now := time.Since(begin)
		for next < len(plan) && plan[next].startAt <= now {
			r := plan[next]
			next++
			vars := map[string]any{}
			if r.kind == kindTimer || r.kind == kindTree || r.kind == evTreePChild {
				vars["until"] = durable.FormatTime(time.Now().Add(time.Duration(150+rng.IntN(600)) * time.Millisecond))
			}
			if _, err := host.Start(ctx, runtime.StartParams{WorkflowID: evWorkflowOf(r.kind), RunID: r.id,
				SessionID: r.session, Vars: vars}); err != nil {
				t.Fatalf("starting %s: %v", r.id, err)
			}
			r.started = time.Now()
		}
		if now >= nextKill && now < soakFor {
			switch p := rng.IntN(10); {
			case p < 5:
				if slot := fleet.inHandler(); slot >= 0 {
					fleet.kill(slot)
					kills++
					break
				}
				fallthrough
			case p < 9:
				fleet.kill(rng.IntN(len(fleet.slots)))
				kills++
			default:
				for slot := range fleet.slots {
					fleet.kill(slot)
					kills++
				}
			}
			nextKill = now + time.Duration(150+rng.IntN(600))*time.Millisecond
		}
		// Pauses of top-level runs and their lifting.
		for _, r := range plan[:next] {
			switch {
			case r.pauseAt == 0 || r.pauseDone:
			case r.pausedAt.IsZero() && time.Since(r.started) >= r.pauseAt:
				got, err := host.Pause(ctx, r.id, "host pause")
				switch {
				case errors.Is(err, runtime.ErrRunClaimed):
				case err != nil:
					hostErr("pause %s: %v", r.id, err)
				case got.Status.Terminal():
					r.pauseDone = true
				default:
					r.pausedAt = time.Now()
					pauses++
				}
			case !r.pausedAt.IsZero() && time.Since(r.pausedAt) >= r.pauseFor:
				if _, err := host.ResumeRun(ctx, r.id); err != nil {
					if !errors.Is(err, runtime.ErrRunClaimed) {
						hostErr("resume-run %s: %v", r.id, err)
					}
					continue
				}
				r.pauseDone = true
			}
		}
		// Pauses of the async child of evTreePChild runs.
		for _, r := range plan[:next] {
			if r.kind != evTreePChild || r.childPauseDone {
				continue
			}
			if r.child == "" {
				kids, err := st.RunListChildren(ctx, r.id, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range kids {
					if k.WorkflowID == "soak_leaf_wait" {
						r.child = k.RunID
					}
				}
				if r.child == "" {
					continue
				}
			}
			switch {
			case r.childPausedAt.IsZero() && time.Since(r.started) >= r.childPauseAt:
				got, err := host.Pause(ctx, r.child, "host pause of a child")
				switch {
				case errors.Is(err, runtime.ErrRunClaimed):
				case err != nil:
					hostErr("pause child %s: %v", r.child, err)
				case got.Status.Terminal():
					r.childPauseDone = true
				default:
					r.childPausedAt = time.Now()
					childPauses++
				}
			case !r.childPausedAt.IsZero() && time.Since(r.childPausedAt) >= r.childPauseFor:
				if _, err := host.ResumeRun(ctx, r.child); err != nil {
					if !errors.Is(err, runtime.ErrRunClaimed) {
						hostErr("resume-run child %s: %v", r.child, err)
					}
					continue
				}
				r.childPauseDone = true
			}
		}
		for _, r := range plan[:next] {
			if r.done || r.cancelAt == 0 || time.Since(r.started) < r.cancelAt {
				continue
			}
			got, err := host.Cancel(ctx, r.id, "host cancel")
			if err != nil {
				hostErr("cancel %s: %v", r.id, err)
				continue
			}
			if !got.Status.Terminal() {
				t.Errorf("Cancel(%s) returned %s, not an ended run", r.id, got.Status)
			}
			r.done, r.cancelled = true, got.Status
		}
		// Release the event waits.
		waiting, err := st.RunList(ctx, &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent, Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		emitted := map[string]bool{}
		for _, w := range waiting {
			r := bySession[w.SessionID]
			if r == nil || w.Waiting == nil || runtime.IsPaused(w) {
				continue
			}
			switch r.kind {
			case evFan:
				if !emitted[r.session] {
					emitted[r.session] = true
					if _, err := host.EmitEvent(ctx, runtime.EmitParams{Name: "go2", Scope: "session", SessionID: r.session,
						Payload: map[string]any{"value": "hello2"}}); err != nil {
						hostErr("emit to %s: %v", r.id, err)
					}
				}
			case evListenPause:
				if !emitted[r.session] {
					emitted[r.session] = true
					if _, err := host.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "session", SessionID: r.session,
						Payload: map[string]any{"value": "hello"}}); err != nil {
						hostErr("emit to %s: %v", r.id, err)
					}
				}
			case evDouble:
				if !r.emitters {
					for _, p := range []string{"emitA-", "emitB-"} {
						if _, err := host.Start(ctx, runtime.StartParams{WorkflowID: "soak_emit", RunID: p + r.id,
							SessionID: r.session}); err != nil {
							t.Fatalf("starting an emitter of %s: %v", r.id, err)
						}
					}
					r.emitters = true
				}
			case kindListenRun:
				if !r.emitter {
					if _, err := host.Start(ctx, runtime.StartParams{WorkflowID: "soak_emit", RunID: "emit-" + r.id,
						SessionID: r.session}); err != nil {
						t.Fatalf("starting the emitter of %s: %v", r.id, err)
					}
					r.emitter = true
				}
			}
		}
		soakPlan := make([]*soakRun, len(plan))
		for i, r := range plan {
			soakPlan[i] = r.soakRun
		}
		if next == len(plan) && now >= soakFor && soakQuiet(ctx, t, st, soakPlan) {
			break
		}
		if time.Now().After(deadline) {
			for _, e := range hostErrs {
				t.Logf("host: %s", e)
			}
			soakDump(ctx, t, st, where)
			t.Fatalf("seed %d: runs still unfinished %v after the kills stopped; %d kills", seed, time.Since(begin)-soakFor, kills)
		}
		time.Sleep(40 * time.Millisecond)
	}
	quiet := time.Since(begin)
	fleet.stop()
	finished = true
	for _, e := range hostErrs {
		t.Logf("host: %s", e)
	}
	t.Logf("seed %d: %d runs over %v with %d kills, %d host pauses, %d child pauses; quiet after %v",
		seed, runs, soakFor, kills, pauses, childPauses, quiet.Round(time.Millisecond))
	soakPlan := make([]*soakRun, len(plan))
	for i, r := range plan {
		soakPlan[i] = r.soakRun
	}
	soakCheck(ctx, t, st, where, dir, soakPlan, want, fleet)
	for _, r := range plan {
		if r.kind != evDouble {
			continue
		}
		for _, p := range []string{"emitA-", "emitB-"} {
			e, err := st.RunGet(ctx, p+r.id)
			if err != nil || e.Status != durable.RunCompleted || !reflect.DeepEqual(normalize(e.Output), normalize(want["emit"])) {
				t.Errorf("emitter %s%s: %v %v", p, r.id, e, err)
			}
		}
	}
	if t.Failed() || os.Getenv("SOAK_VERBOSE") != "" {
		if s := fleet.stderr("host"); s != "" {
			t.Logf("stderr of host:\n%s", s)
		}
		for owner := range fleet.killed {
			if s := fleet.stderr(owner); s != "" {
				t.Logf("stderr of %s:\n%s", owner, s)
			}
		}
		for _, owner := range fleet.clean {
			if s := fleet.stderr(owner); s != "" {
				t.Logf("stderr of %s:\n%s", owner, s)
			}
		}
	}
}
