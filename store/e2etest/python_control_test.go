package e2etest_test

// A Python host sharing our SQLite database (sqlite.Config.Shared)
// controls a run our runtime is ticking.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// runPythonControl runs pythonControlScript with args and returns its output.
func runPythonControl(t *testing.T, args ...string) []byte {
	t.Helper()
	return runPythonScript(t, "control.py", pythonControlScript, args...)
}

// jsonOrError is v as the stores encode it, or the encoding error, for messages.
func jsonOrError(v any) string {
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// A Python host shares the database (sqlite.Config.Shared, the case it
// exists for) and cancels or pauses a run while our runtime executes one
// of its effects. Python's own tick honours such a control write (it
// reloads the run before each commit, _abort_if_externally_controlled),
// and ours honours a cancel or pause by another of our processes: the
// commit after the effect conflicts on runs.version and the host's write
// wins (session.onConflict). Python's save (an upsert) leaves
// runs.version as it was, so before migration 017 our commit after the
// effect matched the version it had read and overwrote the cancel or
// pause: the run went on and completed.
func TestPythonHostControlDuringOurEffectWins(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"cancel", "pause"} {
		t.Run(op, func(t *testing.T) {
			ctx := t.Context()
			iopPython(t)
			dir := t.TempDir()
			st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3"), Shared: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			wf := &runtime.Workflow{ID: "w_job", Entry: "job", Nodes: map[string]runtime.NodeFunc{
				"job": compatNode(func(*durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "done")
				}),
				"done": compatNode(func(*durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
			}}
			reg, err := runtime.NewRegistry(wf)
			if err != nil {
				t.Fatal(err)
			}
			var pyOut []byte
			handler := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				// The effect takes a while; meanwhile the Python host acts.
				pyOut = runPythonControl(t, "control", "sqlite", dir, op, req.Run.RunID)
				return runtime.Completed(map[string]any{"text": "done"}), nil
			}}
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
				Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: handler}})
			if err != nil {
				t.Fatal(err)
			}
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w_job", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			_, terr := rt.Tick(ctx, id, runtime.TickOptions{})
			run, err := st.RunGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("python: %s; tick error: %v", pyOut, terr)
			switch op {
			case "cancel":
				if run.Status != durable.RunCancelled {
					t.Errorf("a Python host cancelled run %s (%s) while our tick ran its effect; afterwards the run is %s (output %s): our commit overwrote the cancel", id, strings.TrimSpace(string(pyOut)), run.Status, jsonOrError(run.Output))
				}
			case "pause":
				if !run.HostPaused() || run.Status == durable.RunCompleted {
					t.Errorf("a Python host paused run %s (%s) while our tick ran its effect; afterwards the run is %s, paused=%v: our commit overwrote the pause", id, strings.TrimSpace(string(pyOut)), run.Status, run.HostPaused())
				}
			}
		})
	}
}

// pythonControlScript: iop control sqlite <dir> <cancel|pause> <run_id>, a Python
// host's cancel_run / pause_run on the shared database.
const pythonControlScript = `import json, os, sys
from abstractruntime.core import runtime as runtime_mod
from abstractruntime.storage import sqlite as sqlite_mod

mode, kind, d, op, rid = sys.argv[1:6]
db = sqlite_mod.SqliteDatabase(os.path.join(d, "runtime.sqlite3"))
rt = runtime_mod.Runtime(run_store=sqlite_mod.SqliteRunStore(db), ledger_store=sqlite_mod.SqliteLedgerStore(db))
r = rt.cancel_run(rid, reason="python host") if op == "cancel" else rt.pause_run(rid, reason="python host")
print(json.dumps({"status": r.status.value}))
`
