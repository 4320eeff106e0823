#!/usr/bin/env python3
"""Writes the Python-recorded data dirs the Go tests resume (python_test.go).

Runs the Python AbstractRuntime 0.4.28 kernel on its JSON-file stores
(json/) and on its SQLite store (sqlite/runtime.sqlite3), leaving runs in
the states the Go runtime must take over: waiting on a user, on a time, on
an event, on a child run; running mid-chain (a host stopped after four
steps); running at a node that raised; completed; failed.

    PEER_SRC=/path/to/abstractruntime-0.4.28/src python3 generate.py

The workflows here and in python_test.go must stay the same.
"""

from __future__ import annotations

import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("PEER_SRC", "")


def kernel():
    # As bench/peer/bench.py: a partial source tree's package __init__ is
    # not executed; the submodules are imported directly.
    if SRC:
        sys.path.insert(0, SRC)
        pkg = types.ModuleType("abstractruntime")
        pkg.__path__ = [os.path.join(SRC, "abstractruntime")]
        sys.modules["abstractruntime"] = pkg
    from abstractruntime.core import models, runtime, spec
    from abstractruntime.scheduler import registry
    from abstractruntime.storage import json_files, sqlite

    return models, runtime, spec, registry, json_files, sqlite


models, runtime_mod, spec, registry_mod, json_files, sqlite_mod = kernel()
StepPlan, Effect, ET = models.StepPlan, models.Effect, models.EffectType
WorkflowSpec = spec.WorkflowSpec


def workflows():
    def ask(run, ctx):
        return StepPlan(node_id="ask", effect=Effect(type=ET.ASK_USER,
                        payload={"prompt": "Continue?", "choices": ["yes", "no"]}, result_key="answer"),
                        next_node="done")

    def ask_done(run, ctx):
        return StepPlan(node_id="done", complete_output={"answer": run.vars["answer"]["text"], "task": run.vars.get("task")})

    def until(run, ctx):
        return StepPlan(node_id="wait", effect=Effect(type=ET.WAIT_UNTIL,
                        payload={"until": "2030-01-01T00:00:00+00:00"}, result_key="woke"), next_node="done")

    def ok_done(run, ctx):
        return StepPlan(node_id="done", complete_output={"ok": True})

    def listen(run, ctx):
        return StepPlan(node_id="listen", effect=Effect(type=ET.WAIT_EVENT,
                        payload={"name": "approval", "scope": "session"}, result_key="evt"), next_node="done")

    def event_done(run, ctx):
        return StepPlan(node_id="done", complete_output={"event": run.vars["evt"]})

    def chain(i):
        def h(run, ctx):
            run.vars[f"k{i}"] = "x" * 32
            if i == 9:
                return StepPlan(node_id=f"n{i}", complete_output={"ok": True, "nodes": 10})
            return StepPlan(node_id=f"n{i}", next_node=f"n{i + 1}")
        return h

    def spawn(run, ctx):
        return StepPlan(node_id="spawn", effect=Effect(type=ET.START_SUBWORKFLOW,
                        payload={"workflow_id": "compat_ask", "vars": {"task": "child"}}, result_key="child"),
                        next_node="done")

    def spawn_done(run, ctx):
        return StepPlan(node_id="done", complete_output={"child": run.vars["child"]})

    def missing(run, ctx):
        return StepPlan(node_id="missing", effect=Effect(type=ET.START_SUBWORKFLOW,
                        payload={"workflow_id": "no_such_workflow"}, result_key="r"), next_node="done")

    def boom(run, ctx):
        raise RuntimeError("boom: node failed on purpose")

    return [
        WorkflowSpec(workflow_id="compat_ask", entry_node="ask", nodes={"ask": ask, "done": ask_done}),
        WorkflowSpec(workflow_id="compat_until", entry_node="wait", nodes={"wait": until, "done": ok_done}),
        WorkflowSpec(workflow_id="compat_event", entry_node="listen", nodes={"listen": listen, "done": event_done}),
        WorkflowSpec(workflow_id="compat_chain", entry_node="n0", nodes={f"n{i}": chain(i) for i in range(10)}),
        WorkflowSpec(workflow_id="compat_parent", entry_node="spawn", nodes={"spawn": spawn, "done": spawn_done}),
        WorkflowSpec(workflow_id="compat_fail", entry_node="missing", nodes={"missing": missing, "done": ok_done}),
        WorkflowSpec(workflow_id="compat_crash", entry_node="boom", nodes={"boom": boom}),
    ]


def record(run_store, ledger_store):
    reg = registry_mod.WorkflowRegistry()
    wfs = {w.workflow_id: w for w in workflows()}
    for w in wfs.values():
        reg.register(w)
    rt = runtime_mod.Runtime(run_store=run_store, ledger_store=ledger_store, workflow_registry=reg)

    def run(wf, max_steps=100, vars=None):
        rid = rt.start(workflow=wfs[wf], vars=vars, actor_id="actor_1", session_id="sess_1")
        return rt.tick(workflow=wfs[wf], run_id=rid, max_steps=max_steps)

    want = {
        "compat_ask": run("compat_ask", vars={"task": "démo — ünïcode", "n": 3, "f": 1.5}).status.value,
        "compat_until": run("compat_until").status.value,
        "compat_event": run("compat_event").status.value,
        "compat_chain": run("compat_chain", max_steps=4).status.value,
        "compat_parent": run("compat_parent").status.value,
        "compat_fail": run("compat_fail").status.value,
    }
    # A node that raises: the 0.4.28 kernel lets the exception out and leaves
    # the run running at that node (the documented contract fails it).
    try:
        run("compat_crash")
    except RuntimeError:
        want["compat_crash"] = "running (raised)"
    # The same chain run to its end: a completed run.
    rid = rt.start(workflow=wfs["compat_chain"], actor_id="actor_1", session_id="sess_2")
    want["compat_chain (completed)"] = rt.tick(workflow=wfs["compat_chain"], run_id=rid).status.value
    print(want, file=sys.stderr)


def main():
    jdir = os.path.join(HERE, "json")
    sdir = os.path.join(HERE, "sqlite")
    for d in (jdir, sdir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    record(json_files.JsonFileRunStore(jdir), json_files.JsonlLedgerStore(jdir))
    db = sqlite_mod.SqliteDatabase(os.path.join(sdir, "runtime.sqlite3"))
    record(sqlite_mod.SqliteRunStore(db), sqlite_mod.SqliteLedgerStore(db))
    conn = db.connection()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # one file, no -wal/-shm to commit
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    for extra in ("runtime.sqlite3-wal", "runtime.sqlite3-shm"):
        p = os.path.join(sdir, extra)
        if os.path.exists(p):
            os.remove(p)


if __name__ == "__main__":
    main()
