package e2etest_test

// What this file checks: runs handed between the Python runtime and ours on
// one data directory, end to end, each side driven through its own API.

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

type piEnv struct {
	t    *testing.T
	kind string
	dir  string
	log  string
}

func newPiEnv(t *testing.T, kind string) *piEnv {
	iopPython(t)
	d := t.TempDir()
	return &piEnv{t: t, kind: kind, dir: d, log: filepath.Join(d, "..", filepath.Base(d)+".effects.log")}
}

// py runs the script; crash=true arms the simulated kill, and the exit
// code 7 it causes is expected then.
func (e *piEnv) py(crash bool, args ...string) map[string]any {
	t := e.t
	t.Helper()
	py, src := iopPython(t)
	script := filepath.Join(t.TempDir(), "pyi.py")
	if err := os.WriteFile(script, []byte(piScript), 0o644); err != nil {
		t.Fatal(err)
	}
	full := append([]string{script, args[0], e.kind, e.dir}, args[1:]...)
	cmd := exec.Command(py, full...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src, "PI_LOG="+e.log)
	if crash {
		cmd.Env = append(cmd.Env, "PI_CRASH=1")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if crash {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 7 {
			return nil
		}
		t.Fatalf("python %v: expected the simulated kill (exit 7), got %v\n%s", args, err, stderr.String())
	}
	if err != nil {
		t.Fatalf("python %v: %v\n%s", args, err, stderr.String())
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("python %v: %v: %s", args, err, out)
	}
	return m
}

func (e *piEnv) effects() []string {
	b, _ := os.ReadFile(e.log)
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (e *piEnv) open() store.Store {
	e.t.Helper()
	var st store.Store
	var err error
	if e.kind == "json" {
		st, err = jsonfile.New(jsonfile.Config{Dir: e.dir, NoSync: true})
	} else {
		st, err = sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(e.dir, "runtime.sqlite3"), Shared: true})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

var piLogMu sync.Mutex

func (e *piEnv) runtime(st store.Store) *runtime.Runtime {
	e.t.Helper()
	n := func(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc { return compatNode(fn) }
	text := func(run *durable.RunState) any {
		a, _ := run.Vars["answer"].(map[string]any)
		return a["text"]
	}
	llm := n(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p:" + pyStr(text(run))}, ResultKey: "reply"}, "done")
	})
	done := n(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Complete(map[string]any{"answer": text(run), "reply": run.Vars["reply"]})
	})
	ask := n(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "q?"}, ResultKey: "answer"}, "llm")
	})
	spawn := func(async bool) runtime.NodeFunc {
		return n(func(run *durable.RunState) runtime.StepPlan {
			p := map[string]any{"workflow_id": "pi_ask", "vars": map[string]any{"task": "child"}}
			if async {
				p["async"], p["wait"] = true, true
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: p, ResultKey: "child"}, "pdone")
		})
	}
	pdone := n(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Complete(map[string]any{"child": run.Vars["child"]})
	})
	until := n(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": run.Vars["until"]}, ResultKey: "woke"}, "llm")
	})
	listen := n(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "go", "scope": "session"}, ResultKey: "evt"}, "llm")
	})
	reg, err := runtime.NewRegistry(
		&runtime.Workflow{ID: "pi_ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{"ask": ask, "llm": llm, "done": done}},
		&runtime.Workflow{ID: "pi_loop", Entry: "ask", Nodes: map[string]runtime.NodeFunc{"ask": ask, "llm": n(func(run *durable.RunState) runtime.StepPlan {
			if text(run) == "bye" {
				return runtime.Complete(map[string]any{"reply": run.Vars["reply"]})
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p:" + pyStr(text(run))}, ResultKey: "reply"}, "ask")
		})}},
		&runtime.Workflow{ID: "pi_llm_first", Entry: "llm", Nodes: map[string]runtime.NodeFunc{"llm": llm, "done": done}},
		&runtime.Workflow{ID: "pi_parent_sync", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{"spawn": spawn(false), "pdone": pdone}},
		&runtime.Workflow{ID: "pi_parent_async", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{"spawn": spawn(true), "pdone": pdone}},
		&runtime.Workflow{ID: "pi_until", Entry: "wait", Nodes: map[string]runtime.NodeFunc{"wait": until, "llm": llm, "done": done}},
		&runtime.Workflow{ID: "pi_event", Entry: "listen", Nodes: map[string]runtime.NodeFunc{"listen": listen, "llm": llm, "done": done}},
	)
	if err != nil {
		e.t.Fatal(err)
	}
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		prompt, _ := req.Effect.Payload["prompt"].(string)
		piLogMu.Lock()
		f, err := os.OpenFile(e.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.WriteString("go " + req.Run.RunID + " " + prompt + "\n")
			f.Close()
		}
		piLogMu.Unlock()
		return runtime.Completed(map[string]any{"content": "go:" + prompt}), nil
	}}
	rt, err := runtime.New(runtime.Config{Store: hashchain.Wrap(st), Registry: reg,
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: h}})
	if err != nil {
		e.t.Fatal(err)
	}
	return rt
}

func pyStr(v any) string {
	if v == nil {
		return "None"
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func closeStore(st store.Store) {
	if c, ok := st.(io.Closer); ok {
		c.Close()
	}
}

// checkPyDump: Python loads the runs, lists their ledgers and verifies
// each chain; seqs (where present) unique, no duplicated completed record
// per idempotency key.
func (e *piEnv) checkPyDump(ids ...string) map[string]map[string]any {
	t := e.t
	t.Helper()
	dump := e.py(false, append([]string{"dump"}, ids...)...)
	out := map[string]map[string]any{}
	for _, id := range ids {
		d, _ := dump[id].(map[string]any)
		out[id] = d
		if d["chain_ok"] != true {
			t.Errorf("Python verify_ledger_chain(%s): %v", id, d["chain_errors"])
		}
		recs, _ := d["ledger"].([]any)
		seen := map[string]bool{}
		for _, r := range recs {
			m := r.(map[string]any)
			if m["status"] == "completed" && m["effect"] != nil {
				k, _ := m["idempotency_key"].(string)
				if seen[k] {
					t.Errorf("run %s: two completed records for key %s", id, k)
				}
				seen[k] = true
			}
		}
	}
	return out
}

func piKinds(t *testing.T, f func(t *testing.T, e *piEnv)) {
	for _, kind := range []string{"json", "sqlite"} {
		t.Run(kind, func(t *testing.T) { f(t, newPiEnv(t, kind)) })
	}
}

// piScript is the Python side (run with PYTHONPATH=<peer src>).
const piScript = `import json, os, sys
from dataclasses import asdict
from abstractruntime.core import models
from abstractruntime.core import runtime as runtime_mod
from abstractruntime.core.spec import WorkflowSpec
from abstractruntime.scheduler import registry as registry_mod
from abstractruntime.storage import commands as commands_mod
from abstractruntime.storage import json_files, ledger_chain
from abstractruntime.storage import sqlite as sqlite_mod

StepPlan, Effect, ET = models.StepPlan, models.Effect, models.EffectType
RunStatus, WaitReason = models.RunStatus, models.WaitReason
EffectOutcome = runtime_mod.EffectOutcome

def workflows():
    def ask(run, ctx):
        return StepPlan(node_id="ask", effect=Effect(type=ET.ASK_USER, payload={"prompt": "q?"}, result_key="answer"), next_node="llm")
    def llm(run, ctx):
        a = run.vars.get("answer") or {}
        return StepPlan(node_id="llm", effect=Effect(type=ET.LLM_CALL, payload={"prompt": "p:" + str(a.get("text"))}, result_key="reply"), next_node="done")
    def done(run, ctx):
        return StepPlan(node_id="done", complete_output={"answer": (run.vars.get("answer") or {}).get("text"), "reply": run.vars.get("reply")})
    def spawn(mode):
        def h(run, ctx):
            p = {"workflow_id": "pi_ask", "vars": {"task": "child"}}
            if mode == "async":
                p["async"] = True; p["wait"] = True
            return StepPlan(node_id="spawn", effect=Effect(type=ET.START_SUBWORKFLOW, payload=p, result_key="child"), next_node="pdone")
        return h
    def pdone(run, ctx):
        return StepPlan(node_id="pdone", complete_output={"child": run.vars.get("child")})
    def until(run, ctx):
        return StepPlan(node_id="wait", effect=Effect(type=ET.WAIT_UNTIL, payload={"until": run.vars["until"]}, result_key="woke"), next_node="llm")
    def listen(run, ctx):
        return StepPlan(node_id="listen", effect=Effect(type=ET.WAIT_EVENT, payload={"name": "go", "scope": "session"}, result_key="evt"), next_node="llm")
    n = {"ask": ask, "llm": llm, "done": done}
    def lask(run, ctx):
        return StepPlan(node_id="ask", effect=Effect(type=ET.ASK_USER, payload={"prompt": "q?"}, result_key="answer"), next_node="llm")
    def lllm(run, ctx):
        t = (run.vars.get("answer") or {}).get("text")
        if t == "bye":
            return StepPlan(node_id="llm", complete_output={"reply": run.vars.get("reply")})
        return StepPlan(node_id="llm", effect=Effect(type=ET.LLM_CALL, payload={"prompt": "p:" + str(t)}, result_key="reply"), next_node="ask")
    return [
        WorkflowSpec(workflow_id="pi_ask", entry_node="ask", nodes=n),
        WorkflowSpec(workflow_id="pi_loop", entry_node="ask", nodes={"ask": lask, "llm": lllm}),
        WorkflowSpec(workflow_id="pi_llm_first", entry_node="llm", nodes={"llm": llm, "done": done}),
        WorkflowSpec(workflow_id="pi_parent_sync", entry_node="spawn", nodes={"spawn": spawn("sync"), "pdone": pdone}),
        WorkflowSpec(workflow_id="pi_parent_async", entry_node="spawn", nodes={"spawn": spawn("async"), "pdone": pdone}),
        WorkflowSpec(workflow_id="pi_until", entry_node="wait", nodes={"wait": until, "llm": llm, "done": done}),
        WorkflowSpec(workflow_id="pi_event", entry_node="listen", nodes={"listen": listen, "llm": llm, "done": done}),
    ]

CRASH = {"armed": False, "hit": False}

def llm_handler(run, effect, default_next_node=None):
    with open(os.path.join(os.environ["PI_LOG"]), "a") as f:
        f.write("py " + run.run_id + " " + effect.payload.get("prompt", "") + "\n")
    if CRASH["armed"]:
        CRASH["hit"] = True
    return EffectOutcome.completed({"content": "py:" + effect.payload.get("prompt", "")})

class Stores:
    def __init__(self, kind, d):
        if kind == "json":
            self.runs = json_files.JsonFileRunStore(d)
            self.ledger = json_files.JsonlLedgerStore(d)
            self.commands = commands_mod.JsonlCommandStore(d)
            self.cursor = commands_mod.JsonFileCommandCursorStore(os.path.join(d, "commands_cursor.json"))
        else:
            db = sqlite_mod.SqliteDatabase(os.path.join(d, "runtime.sqlite3"))
            self.runs = sqlite_mod.SqliteRunStore(db)
            self.ledger = sqlite_mod.SqliteLedgerStore(db)
            self.commands = sqlite_mod.SqliteCommandStore(db)
            self.cursor = sqlite_mod.SqliteCommandCursorStore(db)

def make(kind, d):
    st = Stores(kind, d)
    orig = st.runs.save
    def save(run):
        if CRASH["hit"]:
            raise SystemExit(7)  # killed between the completed record and the save
        return orig(run)
    st.runs.save = save
    reg = registry_mod.WorkflowRegistry()
    wfs = {w.workflow_id: w for w in workflows()}
    for w in wfs.values():
        reg.register(w)
    rt = runtime_mod.Runtime(run_store=st.runs, ledger_store=ledger_chain.HashChainedLedgerStore(st.ledger),
                             workflow_registry=reg, effect_handlers={ET.LLM_CALL: llm_handler})
    return st, rt, wfs

def dump(st, rid):
    r = st.runs.load(rid)
    recs = st.ledger.list(rid)
    rep = ledger_chain.verify_ledger_chain(recs)
    return {"run": asdict(r), "ledger": recs, "chain_ok": rep["ok"], "chain_errors": rep["errors"]}

def main():
    mode, kind, d = sys.argv[1:4]
    a = sys.argv[4:]
    if os.environ.get("PI_CRASH") == "1":
        CRASH["armed"] = True
    st, rt, wfs = make(kind, d)
    out = {}
    if mode == "start":  # wf vars_json [session]
        rid = rt.start(workflow=wfs[a[0]], vars=json.loads(a[1]), session_id=(a[2] if len(a) > 2 else "s1"))
        r = rt.tick(workflow=wfs[a[0]], run_id=rid)
        out = {"run_id": rid, "status": r.status.value}
        kids = st.runs.list_children(parent_run_id=rid)
        out["children"] = [k.run_id for k in kids]
    elif mode == "resume":  # rid payload_json
        r = st.runs.load(a[0])
        r = rt.resume(workflow=wfs[r.workflow_id], run_id=a[0], wait_key=r.waiting.wait_key, payload=json.loads(a[1]))
        out = {"status": r.status.value}
    elif mode == "tick":
        r = st.runs.load(a[0])
        r = rt.tick(workflow=wfs[r.workflow_id], run_id=a[0])
        out = {"status": r.status.value}
    elif mode == "dump":
        out = {rid: dump(st, rid) for rid in a}
    elif mode == "cmd_append":  # id run type
        r = st.commands.append(commands_mod.CommandRecord(command_id=a[0], run_id=a[1], type=a[2], payload={}, ts=""))
        out = {"seq": r.seq, "dup": r.duplicate}
    elif mode == "cmd_list":  # after
        recs, cur = st.commands.list_after(after=int(a[0]), limit=1000)
        out = {"cmds": [[r.seq, r.command_id] for r in recs], "next": cur, "cursor": st.cursor.load(), "last": st.commands.get_last_seq()}
    elif mode == "cursor_save":
        st.cursor.save(int(a[0])); out = {"ok": True}
    print(json.dumps(out))

main()
`

// Scenario tests.

// Go starts a run (ASK_USER: its vars._runtime.effect_seq moves to 1) and
// leaves it waiting; Python answers, runs the LLM_CALL and is killed after
// appending its completed record, before saving the state; ours takes
// over. execute looks Python's key up only for runs without effect_seq
// ("a run the Python runtime left"), but this one kept the stale seq our
// earlier leg wrote (Python keeps unknown vars): the model is called a
// second time although Python's completed record is in the ledger (Python
// itself, resuming here, would have reused it).
func TestPythonGoPythonKilledGo(t *testing.T) {
	piKinds(t, func(t *testing.T, e *piEnv) {
		ctx := t.Context()
		st := e.open()
		rt := e.runtime(st)
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "pi_ask", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || r.Status != durable.RunWaiting {
			t.Fatalf("tick: %+v %v", r, err)
		}
		closeStore(st)
		e.py(true, "resume", id, `{"text":"py"}`)
		st = e.open()
		defer closeStore(st)
		r, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after the kill: status %s node %s answer %v", r.Status, r.CurrentNode, r.Vars["answer"])
		rt = e.runtime(st)
		if r.Status == durable.RunRunning {
			r, err = rt.Tick(ctx, id, runtime.TickOptions{})
		} else {
			r, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: r.Waiting.WaitKey, Payload: map[string]any{"text": "py"}})
		}
		if err != nil || r.Status != durable.RunCompleted {
			t.Fatalf("go continue: %+v %v", r, err)
		}
		if got := e.effects(); len(got) != 1 {
			t.Errorf("LLM calls: %v; want Python's one, reused (its completed record is in the ledger)", got)
		}
		closeStore(st)
		e.checkPyDump(id)
	})
}

// A chat loop Python started: the user said "again", Python called the
// model with "p:again" and asks again. The user says "again" once more,
// through our runtime: the model must be called again (compatibility.md:
// a loop repeating an identical effect runs it again; an old ledger does
// not dedupe against new steps). Ours looks the effect up under Python's
// key (meant for a completion Python recorded before a kill) and reuses
// the first turn's answer.
func TestPythonPythonLoopRepeatedTurn(t *testing.T) {
	piKinds(t, func(t *testing.T, e *piEnv) {
		ctx := t.Context()
		id := e.py(false, "start", "pi_loop", "{}")["run_id"].(string)
		if r := e.py(false, "resume", id, `{"text":"again"}`); r["status"] != "waiting" {
			t.Fatalf("python resume: %v", r)
		}
		st := e.open()
		defer closeStore(st)
		rt := e.runtime(st)
		r, err := st.RunGet(ctx, id)
		if err != nil || r.Status != durable.RunWaiting {
			t.Fatalf("%+v %v", r, err)
		}
		r, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: r.Waiting.WaitKey, Payload: map[string]any{"text": "again"}})
		if err != nil || r.Status != durable.RunWaiting {
			t.Fatalf("go resume: %+v %v", r, err)
		}
		if got := e.effects(); len(got) != 2 {
			t.Errorf("LLM calls after two turns \"again\" (Python's, then ours): %v; the second turn reused the first turn's result %v", got, r.Vars["reply"])
		}
	})
}
