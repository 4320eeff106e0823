package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

type badNodeStore struct {
	name string
	st   store.Store
}

func badNodeStores(t *testing.T) []badNodeStore {
	t.Helper()
	js, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	sq, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return []badNodeStore{{"memory", memory.New()}, {"jsonfile", js}, {"sqlite", sq}}
}

func badNodeRuntime(t *testing.T, st store.Store, wf *runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// tickNoPanic ticks run id, turning a panic that escapes Tick into an
// error (in a host it would crash the process).
func tickNoPanic(ctx context.Context, rt *runtime.Runtime, id string) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	_, err = rt.Tick(ctx, id, runtime.TickOptions{})
	return nil, err
}

// TestNodeSettingNilVarsFailsRunWithoutPanic: a node that leaves the run
// with nil vars (run.Vars = loadConfig() returning a nil map, say) once
// made Tick panic in the kernel's own writes to vars after the node had
// returned (past callNode's recover), crashing the host process with
// every other run. A node's bad output fails its run with a recorded
// error instead, and the run stays loadable.
func TestNodeSettingNilVarsFailsRunWithoutPanic(t *testing.T) {
	ctx := context.Background()
	for _, withEffect := range []bool{false, true} {
		for _, s := range badNodeStores(t) {
			name := fmt.Sprintf("%s effect=%v", s.name, withEffect)
			wf := &runtime.Workflow{ID: "nilvars", Entry: "a", Nodes: map[string]runtime.NodeFunc{
				"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					run.Vars = nil
					if withEffect {
						return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
							Payload: map[string]any{"prompt": "?"}, ResultKey: "answer"}, "b")
					}
					return runtime.Next("b")
				}),
				"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					return runtime.Complete(map[string]any{"ok": true})
				}),
			}}
			rt := badNodeRuntime(t, s.st, wf)
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "nilvars"})
			if err != nil {
				t.Fatal(err)
			}
			p, terr := tickNoPanic(ctx, rt, id)
			if p != nil {
				t.Errorf("%s: Tick panicked (%v): a node's nil vars crash the host process", name, p)
				continue
			}
			st, err := rt.GetState(ctx, id)
			if err != nil {
				t.Errorf("%s: run not loadable after the tick (tick error %v): %v", name, terr, err)
				continue
			}
			if st.Status != durable.RunFailed || !strings.Contains(st.Error, `node "a" removed the run's vars`) {
				t.Errorf("%s: run %s with error %q (tick error %v), want failed naming the node and its vars",
					name, st.Status, st.Error, terr)
			}
		}
	}
}

// TestNodeSettingUnknownStatusFailsRunAndKeepsItLoadable: a node that sets
// run.Status to a value that is no run status ("bogus") must not have it
// committed: every decoder refuses an unknown status (as Python's
// RunState.from_dict does RunStatus(value)), so the run would be lost for
// good after a restart, neither loadable nor resumable nor cancellable.
// The run fails with a recorded error naming the node, as for a handler's
// wait with an unknown reason.
func TestNodeSettingUnknownStatusFailsRunAndKeepsItLoadable(t *testing.T) {
	ctx := context.Background()
	for _, s := range []string{"sqlite", "jsonfile"} {
		dir := t.TempDir()
		open := func() store.Store {
			if s == "sqlite" {
				st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "db.sqlite")})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			st, err := jsonfile.New(jsonfile.Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		wf := &runtime.Workflow{ID: "bogus", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				run.Vars["keep"] = "me"
				run.Status = "bogus"
				return runtime.Next("b")
			}),
			"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}}
		st := open()
		rt := badNodeRuntime(t, st, wf)
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "bogus", Vars: map[string]any{"input": 1}})
		if err != nil {
			t.Fatal(err)
		}
		p, terr := tickNoPanic(ctx, rt, id)
		if p != nil {
			t.Fatalf("%s: tick panicked: %v", s, p)
		}
		st.Close()
		st = open() // a restart
		rt = badNodeRuntime(t, st, wf)
		got, err := rt.GetState(ctx, id)
		st.Close()
		if err != nil {
			t.Errorf("%s: after a node set status \"bogus\" (tick error %v) the run is lost: %v", s, terr, err)
			continue
		}
		if got.Status != durable.RunFailed || !strings.Contains(got.Error, `node "a" set the run's status to "bogus"`) {
			t.Errorf("%s: run stored %s with error %q, want failed naming the node and the status", s, got.Status, got.Error)
		}
	}
}

// TestNodeChangingRunIDDoesNotOverwriteAnotherRun: a node that changes
// run.RunID (a bug, or a node copying a state it loaded into the run it
// was given) must not have the kernel commit the ticked run's state and
// records under the other id, bypassing that run's lock and claim (every
// store would write it when the versions match, as for two runs just
// started). The kernel undoes the change and fails the ticked run with a
// recorded error naming the field.
func TestNodeChangingRunIDDoesNotOverwriteAnotherRun(t *testing.T) {
	ctx := context.Background()
	for _, s := range badNodeStores(t) {
		var victim string
		wf := &runtime.Workflow{ID: "swap", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				if run.Vars["who"] == "attacker" {
					run.RunID = victim
				}
				return runtime.Next("b")
			}),
			"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}}
		rt := badNodeRuntime(t, s.st, wf)
		var err error
		victim, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "swap", Vars: map[string]any{"who": "victim"}})
		if err != nil {
			t.Fatal(err)
		}
		att, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "swap", Vars: map[string]any{"who": "attacker"}})
		if err != nil {
			t.Fatal(err)
		}
		p, terr := tickNoPanic(ctx, rt, att)
		if p != nil {
			t.Fatalf("%s: tick panicked: %v", s.name, p)
		}
		v, err := rt.GetState(ctx, victim)
		if err != nil {
			t.Fatal(err)
		}
		if v.Vars["who"] != "victim" || v.Status != durable.RunRunning || v.CurrentNode != "a" {
			t.Errorf("%s: ticking run %s overwrote run %s: now who=%v status=%s node=%s (tick error %v)",
				s.name, att, victim, v.Vars["who"], v.Status, v.CurrentNode, terr)
		}
		if recs, _ := rt.GetLedger(ctx, victim); len(recs) != 0 {
			t.Errorf("%s: the untouched run %s gained %d ledger records from another run's tick", s.name, victim, len(recs))
		}
		a, err := rt.GetState(ctx, att)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("node \"a\" changed the run's run_id from %q to %q", att, victim)
		if a.Status != durable.RunFailed || a.Error != want {
			t.Errorf("%s: ticked run %s with error %q, want failed with %q", s.name, a.Status, a.Error, want)
		}
	}
}

// TestHandlerChangingKernelFieldsFailsRun: an effect handler gets the run
// too (EffectRequest.Run); its change of a field the kernel owns is undone
// and fails the attempt, so the run fails with the handler's error instead
// of being committed under another id or in a state no store can read.
func TestHandlerChangingKernelFieldsFailsRun(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, want string
		edit       func(r *durable.RunState)
	}{
		{"workflow id", `effect handler for bad changed the run's workflow_id from "h" to "other"`,
			func(r *durable.RunState) { r.WorkflowID = "other" }},
		{"status", `effect handler for bad set the run's status to "bogus", not one of the run statuses`,
			func(r *durable.RunState) { r.Status = "bogus" }},
		{"nil vars", "effect handler for bad removed the run's vars",
			func(r *durable.RunState) { r.Vars = nil }},
	} {
		reg := badEffectThenDone(t)
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
			"bad": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				c.edit(req.Run)
				return runtime.Completed("done"), nil
			}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "h"})
		if err != nil {
			t.Fatal(err)
		}
		p, terr := tickNoPanic(ctx, rt, id)
		if p != nil {
			t.Fatalf("%s: tick panicked: %v", c.name, p)
		}
		got, err := rt.GetState(ctx, id)
		if err != nil {
			t.Fatalf("%s: run not loadable (tick error %v): %v", c.name, terr, err)
		}
		if got.Status != durable.RunFailed || !strings.Contains(got.Error, c.want) || got.WorkflowID != "h" {
			t.Errorf("%s: run %s of workflow %q with error %q, want failed with %q", c.name, got.Status, got.WorkflowID, got.Error, c.want)
		}
	}
}

// A handler's waiting outcome whose WaitState has no (or an unknown)
// reason was committed as is: callHandler checked only that the wait was
// not nil. Every store's decoder refuses such a wait, so once the run was
// read back from disk it could not be loaded at all any more. The kernel
// now fails the attempt, as for a waiting outcome without a wait.
func TestHandlersWaitWithoutValidReasonLeavesRunUnreadable(t *testing.T) {
	for _, backend := range []string{"jsonfile", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			open := func() (interface{ Close() error }, *runtime.Runtime) {
				wf := oneEffect("w", func() *durable.Effect {
					return &durable.Effect{Type: "host_wait", ResultKey: "r", Payload: map[string]any{}}
				})
				reg, err := runtime.NewRegistry(wf)
				if err != nil {
					t.Fatal(err)
				}
				var cfg runtime.Config
				var closer interface{ Close() error }
				switch backend {
				case "jsonfile":
					st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Store, closer = st, st
				default:
					st, err := sqlite.New(ctx, sqlite.Config{Path: dir + "/db.sqlite"})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Store, closer = st, st
				}
				cfg.Registry = reg
				rt, err := runtime.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				// A host handler that forgets the reason (the zero WaitState
				// fields are otherwise all legal).
				rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
					return &durable.WaitState{WaitKey: "k", ResumeToNode: req.DefaultNext, ResultKey: "r"}
				}))
				return closer, rt
			}
			st, rt := open()
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
				t.Fatalf("tick: %v", err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st2, rt2 := open()
			defer st2.Close()
			got, err := rt2.GetState(ctx, id)
			if err != nil {
				t.Fatalf("the run the kernel committed cannot be read back: %v", err)
			}
			if got.Status == durable.RunWaiting {
				t.Fatalf("run waits on a wait without a valid reason: %+v", got.Waiting)
			}
		})
	}
}

// badEffectThenDone is workflow "h": node a requests an effect of type
// "bad" (result at r) and goes on to b, which completes with {"ok": true}.
func badEffectThenDone(t *testing.T) *runtime.Registry {
	t.Helper()
	wf := &runtime.Workflow{ID: "h", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "bad", ResultKey: "r"}, "b")
		}),
		"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
