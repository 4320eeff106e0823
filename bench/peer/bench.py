#!/usr/bin/env python3
"""Benchmark harness for the Python AbstractRuntime kernel (peer of the Go rewrite).

Implements the workloads and the method of ../shared/bench/README.md:

  W1 w1_chain, W2 w2_ask_resume, W3 w3_wait_until_past, W3b w3_wait_until_due,
  W4 w4_ledger_read (runs after W1 in the same process, on W1's store)

on the stores memory, json, sqlite (the module's own pragmas) and sqlite_full
(harness-side subclass: the original _apply_pragmas, then synchronous=FULL).

Method: one fresh interpreter per (store, workload, repeat) -- W1 and W4 share
one -- with the repeats as the outer loop. In each process: a 5-run pilot on a
separate store instance (untimed; counts the store calls per run), then a
fresh store and N timed runs with time.perf_counter() around the loop only,
then an untimed verification of every run. The reported line per
(workload, store) is the sample with the median `seconds`; every sample's
seconds are listed in `samples`.

The kernel comes from an installed AbstractRuntime (pip install
AbstractRuntime==0.4.28), or, when PEER_SRC names a source tree holding
abstractruntime/, from there (its package __init__ is then not executed: see
import_kernel).

Usage:
  [PEER_SRC=/path/to/src] python3 bench.py [--stores memory,json,sqlite,sqlite_full]
      [--workloads w1_chain,w2_ask_resume,w3_wait_until_past,w3_wait_until_due,w4_ledger_read]
      [--runs 1000] [--repeats 3] [--dir DIR]

stdout: one JSON line per (workload, store). stderr: progress, pilot store-call
counts and their comparison with the README's table. Exit status is non-zero
if any process failed (a failed check prints no number for that pair).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import asdict
from datetime import datetime, timedelta, timezone

# A source tree holding abstractruntime/, or "" to import the installed
# package.
SRC = os.environ.get("PEER_SRC", "")

ALL_STORES = ["memory", "json", "sqlite", "sqlite_full"]
ALL_WORKLOADS = [
    "w1_chain",
    "w2_ask_resume",
    "w3_wait_until_past",
    "w3_wait_until_due",
    "w4_ledger_read",
]
PILOT_RUNS = 5

# README "What the Python kernel does per run (measured by the pilot)".
# (saves, loads, appends, lists, sqlite commits, records, ledger JSON B, state JSON B)
README_OPS = {
    "w1_chain": dict(saves=11, loads=21, appends=2, lists=0, commits=13, records=2, ledger_bytes=1132, state_bytes=1100),
    "w2_ask_resume": dict(saves=4, loads=7, appends=5, lists=2, commits=9, records=5, ledger_bytes=3029, state_bytes=1336),
    "w3_wait_until_past": dict(saves=3, loads=5, appends=4, lists=1, commits=7, records=4, ledger_bytes=2230, state_bytes=1218),
    "w3_wait_until_due": dict(saves=3, loads=6, appends=4, lists=1, commits=7, records=4, ledger_bytes=2404, state_bytes=1309),
    "w4_ledger_read": dict(saves=0, loads=0, appends=0, lists=1, commits=0, records=2),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Kernel import (child processes only)
# ---------------------------------------------------------------------------


def import_kernel():
    """Import the kernel modules the benchmark uses.

    From a PEER_SRC tree, the package `abstractruntime/__init__.py` is not
    executed: it eagerly imports the whole distribution (artifacts, bundles,
    memory, identity, integrations, ...), which a partial source tree lacks
    and the benchmark never touches. The package object is registered with
    its __path__ and the submodules are imported directly. No kernel or store
    code path is altered.
    """
    if SRC and "abstractruntime" not in sys.modules:
        if SRC not in sys.path:
            sys.path.insert(0, SRC)
        pkg = types.ModuleType("abstractruntime")
        pkg.__path__ = [os.path.join(SRC, "abstractruntime")]
        pkg.__file__ = os.path.join(SRC, "abstractruntime", "__init__.py")
        sys.modules["abstractruntime"] = pkg

    from abstractruntime.core import runtime as rt_mod
    from abstractruntime.core import models, spec
    from abstractruntime.storage import in_memory, json_files, sqlite as sqlite_mod
    from abstractruntime.scheduler import scheduler as sched_mod, registry as reg_mod

    return types.SimpleNamespace(
        Runtime=rt_mod.Runtime,
        utc_now_iso=rt_mod.utc_now_iso,
        Effect=models.Effect,
        EffectType=models.EffectType,
        StepPlan=models.StepPlan,
        RunStatus=models.RunStatus,
        WaitReason=models.WaitReason,
        WorkflowSpec=spec.WorkflowSpec,
        InMemoryRunStore=in_memory.InMemoryRunStore,
        InMemoryLedgerStore=in_memory.InMemoryLedgerStore,
        JsonFileRunStore=json_files.JsonFileRunStore,
        JsonlLedgerStore=json_files.JsonlLedgerStore,
        SqliteDatabase=sqlite_mod.SqliteDatabase,
        SqliteRunStore=sqlite_mod.SqliteRunStore,
        SqliteLedgerStore=sqlite_mod.SqliteLedgerStore,
        Scheduler=sched_mod.Scheduler,
        WorkflowRegistry=reg_mod.WorkflowRegistry,
    )


# ---------------------------------------------------------------------------
# Stores
# ---------------------------------------------------------------------------


class StoreSet:
    def __init__(self, run_store, ledger_store, db=None, path=None):
        self.run_store = run_store
        self.ledger_store = ledger_store
        self.db = db
        self.path = path


def make_store(K, kind: str, directory: str) -> StoreSet:
    if kind == "memory":
        return StoreSet(K.InMemoryRunStore(), K.InMemoryLedgerStore())
    os.makedirs(directory, exist_ok=True)
    if kind == "json":
        return StoreSet(K.JsonFileRunStore(directory), K.JsonlLedgerStore(directory), path=directory)
    if kind in ("sqlite", "sqlite_full"):
        db_cls = K.SqliteDatabase
        if kind == "sqlite_full":

            class FullSyncSqliteDatabase(K.SqliteDatabase):
                """Harness-side subclass: the module's pragmas, then synchronous=FULL."""

                def _apply_pragmas(self, conn):  # noqa: D401
                    super()._apply_pragmas(conn)
                    conn.execute("PRAGMA synchronous=FULL;")

            db_cls = FullSyncSqliteDatabase
        db = db_cls(os.path.join(directory, "runtime.sqlite3"))
        return StoreSet(K.SqliteRunStore(db), K.SqliteLedgerStore(db), db=db, path=directory)
    raise ValueError(f"unknown store {kind!r}")


class OpCounter:
    """Counts store calls by wrapping the store instances' methods (pilot only)."""

    def __init__(self, stores: StoreSet):
        self.c = dict(saves=0, loads=0, appends=0, lists=0, list_due=0, commits=0)
        self._wrap(stores.run_store, "save", "saves")
        self._wrap(stores.run_store, "load", "loads")
        if hasattr(stores.run_store, "list_due_wait_until"):
            self._wrap(stores.run_store, "list_due_wait_until", "list_due")
        self._wrap(stores.ledger_store, "append", "appends")
        self._wrap(stores.ledger_store, "list", "lists")
        self.enabled = True
        if stores.db is not None:
            conn = stores.db.connection()  # this thread's connection (the one the stores use)

            def trace(stmt: str) -> None:
                if self.enabled and stmt.strip().upper().startswith("COMMIT"):
                    self.c["commits"] += 1

            conn.set_trace_callback(trace)

    def _wrap(self, obj, name, key):
        orig = getattr(obj, name)
        counter = self

        def wrapper(*a, **kw):
            if counter.enabled:
                counter.c[key] += 1
            return orig(*a, **kw)

        setattr(obj, name, wrapper)

    def snapshot(self):
        return dict(self.c)


# ---------------------------------------------------------------------------
# Workflows (steps counted inside the node handlers)
# ---------------------------------------------------------------------------

STEPS = [0]
DUE_UNTILS: list = []
PAST_UNTIL = "2000-01-01T00:00:00+00:00"


def build_workflows(K):
    StepPlan, Effect, EffectType, WorkflowSpec = K.StepPlan, K.Effect, K.EffectType, K.WorkflowSpec
    x32 = "x" * 32

    def chain_node(i: int):
        node_id = f"n{i}"
        key = f"k{i}"
        if i < 9:
            nxt = f"n{i + 1}"

            def h(run, ctx):
                STEPS[0] += 1
                run.vars[key] = x32
                return StepPlan(node_id=node_id, next_node=nxt)

        else:

            def h(run, ctx):
                STEPS[0] += 1
                run.vars[key] = x32
                return StepPlan(node_id=node_id, complete_output={"ok": True, "nodes": 10})

        return h

    w1 = WorkflowSpec(workflow_id="bench_w1_chain", entry_node="n0", nodes={f"n{i}": chain_node(i) for i in range(10)})

    def ask(run, ctx):
        STEPS[0] += 1
        return StepPlan(
            node_id="ask",
            effect=Effect(type=EffectType.ASK_USER, payload={"prompt": "Continue?"}, result_key="answer"),
            next_node="done",
        )

    def ask_done(run, ctx):
        STEPS[0] += 1
        return StepPlan(node_id="done", complete_output={"answer": run.vars["answer"]["text"]})

    w2 = WorkflowSpec(workflow_id="bench_w2_ask", entry_node="ask", nodes={"ask": ask, "done": ask_done})

    def wait_past(run, ctx):
        STEPS[0] += 1
        return StepPlan(
            node_id="wait",
            effect=Effect(type=EffectType.WAIT_UNTIL, payload={"until": PAST_UNTIL}, result_key="woke"),
            next_node="done",
        )

    def ok_done(run, ctx):
        STEPS[0] += 1
        return StepPlan(node_id="done", complete_output={"ok": True})

    w3 = WorkflowSpec(workflow_id="bench_w3_past", entry_node="wait", nodes={"wait": wait_past, "done": ok_done})

    def wait_due(run, ctx):
        STEPS[0] += 1
        until = (datetime.now(timezone.utc) + timedelta(milliseconds=250)).isoformat()
        DUE_UNTILS.append(until)
        return StepPlan(
            node_id="wait",
            effect=Effect(type=EffectType.WAIT_UNTIL, payload={"until": until}, result_key="woke"),
            next_node="done",
        )

    w3b = WorkflowSpec(workflow_id="bench_w3_due", entry_node="wait", nodes={"wait": wait_due, "done": ok_done})
    return {"w1_chain": w1, "w2_ask_resume": w2, "w3_wait_until_past": w3, "w3_wait_until_due": w3b}


class CheckFailed(Exception):
    pass


def require(cond: bool, msg: str) -> None:
    if not cond:
        raise CheckFailed(msg)


# ---------------------------------------------------------------------------
# Workload drivers (the loops that are timed)
# ---------------------------------------------------------------------------


def drive_start_tick(K, rt, wf, n, label):
    """W1 and W3: start + tick, requiring COMPLETED."""
    COMPLETED = K.RunStatus.COMPLETED
    ids = []
    t0 = time.perf_counter()
    for _ in range(n):
        run_id = rt.start(workflow=wf)
        state = rt.tick(workflow=wf, run_id=run_id, max_steps=100)
        if state.status != COMPLETED:
            raise CheckFailed(f"{label}: run {run_id} status {state.status}")
        ids.append(run_id)
    return time.perf_counter() - t0, ids, {}


def drive_w2(K, rt, wf, n):
    COMPLETED, WAITING, USER = K.RunStatus.COMPLETED, K.RunStatus.WAITING, K.WaitReason.USER
    ids = []
    t0 = time.perf_counter()
    for _ in range(n):
        run_id = rt.start(workflow=wf)
        state = rt.tick(workflow=wf, run_id=run_id, max_steps=100)
        if state.status != WAITING or state.waiting is None or state.waiting.reason != USER:
            raise CheckFailed(f"w2: run {run_id} not waiting for user after tick ({state.status})")
        key = state.waiting.wait_key
        if key != f"user:{run_id}:ask":
            raise CheckFailed(f"w2: unexpected wait key {key!r}")
        state = rt.resume(workflow=wf, run_id=run_id, wait_key=key, payload={"text": "yes"})
        if state.status != COMPLETED or state.output != {"answer": "yes"}:
            raise CheckFailed(f"w2: run {run_id} not completed after resume ({state.status}, {state.output})")
        ids.append(run_id)
    return time.perf_counter() - t0, ids, {}


def drive_w3b(K, rt, wf, n, scheduler):
    COMPLETED, WAITING, UNTIL = K.RunStatus.COMPLETED, K.RunStatus.WAITING, K.WaitReason.UNTIL
    ids = []
    immediate = 0
    DUE_UNTILS.clear()
    # Phase A (timed): start + tick -> WAITING(until)
    t0 = time.perf_counter()
    for _ in range(n):
        run_id = rt.start(workflow=wf)
        state = rt.tick(workflow=wf, run_id=run_id, max_steps=100)
        if state.status == COMPLETED:
            immediate += 1
        elif state.status != WAITING or state.waiting is None or state.waiting.reason != UNTIL:
            raise CheckFailed(f"w3b: run {run_id} not waiting(until) after tick ({state.status})")
        ids.append(run_id)
    phase_a = time.perf_counter() - t0
    # Gap (untimed): sleep until the latest `until` has passed (+5 ms).
    if DUE_UNTILS:
        latest = max(datetime.fromisoformat(u) for u in DUE_UNTILS)
        delay = (latest - datetime.now(timezone.utc)).total_seconds() + 0.005
        if delay > 0:
            time.sleep(delay)
    # Phase B (timed): the kernel's own scheduler cycle until a cycle finds nothing.
    cycles = 0
    t1 = time.perf_counter()
    while True:
        cycles += 1
        resumed = scheduler.poll_once()
        if resumed == 0:
            break
    phase_b = time.perf_counter() - t1
    return phase_a + phase_b, ids, {
        "phase_a_s": phase_a,
        "phase_b_s": phase_b,
        "cycles": cycles,
        "immediate_fallbacks": immediate,
    }


def drive_w4(K, rt, run_ids):
    total = 0
    t0 = time.perf_counter()
    for run_id in run_ids:
        total += len(rt.get_ledger(run_id))
    return time.perf_counter() - t0, total


# ---------------------------------------------------------------------------
# Verification (untimed)
# ---------------------------------------------------------------------------


def verify(K, workload, stores, run_ids):
    """Reload every run; check status/output (and W1 vars); count and size its ledger."""
    COMPLETED = K.RunStatus.COMPLETED
    x32 = "x" * 32
    records = 0
    ledger_bytes = 0
    state_bytes = 0
    for run_id in run_ids:
        run = stores.run_store.load(run_id)
        require(run is not None, f"{workload}: run {run_id} missing from store")
        require(run.status == COMPLETED, f"{workload}: run {run_id} status {run.status}")
        if workload == "w1_chain":
            require(run.output == {"ok": True, "nodes": 10}, f"w1: bad output {run.output}")
            for i in range(10):
                require(run.vars.get(f"k{i}") == x32, f"w1: run {run_id} vars.k{i} wrong")
        elif workload == "w2_ask_resume":
            require(run.output == {"answer": "yes"}, f"w2: bad output {run.output}")
        elif workload == "w3_wait_until_past":
            require(run.output == {"ok": True}, f"w3: bad output {run.output}")
            require(run.vars.get("woke") == {"until": PAST_UNTIL, "ready": True}, f"w3: bad vars.woke {run.vars.get('woke')}")
        elif workload == "w3_wait_until_due":
            require(run.output == {"ok": True}, f"w3b: bad output {run.output}")
        state_bytes += len(json.dumps(asdict(run)))
        ledger = stores.ledger_store.list(run_id)
        require(len(ledger) > 0, f"{workload}: run {run_id} has an empty ledger")
        records += len(ledger)
        ledger_bytes += sum(len(json.dumps(r)) for r in ledger)
    n = max(1, len(run_ids))
    return records / n, ledger_bytes / n, state_bytes / n


# ---------------------------------------------------------------------------
# Child process: one (store, workload-group, repeat)
# ---------------------------------------------------------------------------


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def minor_faults() -> int:
    """Minor page faults so far: memory touched for the first time."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def compare_with_readme(workload, store, ops):
    exp = README_OPS.get(workload)
    if not exp:
        return
    keys = ["saves", "loads", "appends", "lists"]
    if store.startswith("sqlite"):
        keys.append("commits")
    keys.append("records")
    mism = []
    for k in keys:
        got = ops.get(k)
        if got is None:
            continue
        if abs(float(got) - float(exp[k])) > 1e-9:
            mism.append(f"{k}: got {got} README {exp[k]}")
    for k in ("ledger_bytes", "state_bytes"):
        if k in exp and ops.get(k) is not None:
            d = float(ops[k]) - float(exp[k])
            if abs(d) > 0.02 * exp[k]:
                mism.append(f"{k}: got {ops[k]} README {exp[k]}")
    if mism:
        log(f"[pilot] {workload}/{store}: MISMATCH vs README table: " + "; ".join(mism))
    else:
        log(f"[pilot] {workload}/{store}: matches README table")


def run_pilot(K, wfs, store, workload, directory, with_w4):
    stores = make_store(K, store, directory)
    rt = K.Runtime(run_store=stores.run_store, ledger_store=stores.ledger_store)
    counter = OpCounter(stores)
    scheduler = None
    if workload == "w3_wait_until_due":
        reg = K.WorkflowRegistry()
        reg.register(wfs[workload])
        scheduler = K.Scheduler(runtime=rt, registry=reg)
    wf = wfs.get(workload)
    before = STEPS[0]
    c0 = counter.snapshot()
    if workload == "w1_chain":
        _, ids, extra = drive_start_tick(K, rt, wf, PILOT_RUNS, "w1")
    elif workload == "w2_ask_resume":
        _, ids, extra = drive_w2(K, rt, wf, PILOT_RUNS)
    elif workload == "w3_wait_until_past":
        _, ids, extra = drive_start_tick(K, rt, wf, PILOT_RUNS, "w3")
    elif workload == "w3_wait_until_due":
        _, ids, extra = drive_w3b(K, rt, wf, PILOT_RUNS, scheduler)
    else:
        raise ValueError(workload)
    c1 = counter.snapshot()
    steps = STEPS[0] - before
    per = {k: (c1[k] - c0[k]) / PILOT_RUNS for k in c1}
    counter.enabled = False
    rec, lb, sb = verify(K, workload, stores, ids)
    ops = dict(
        steps=steps / PILOT_RUNS,
        saves=per["saves"], loads=per["loads"], appends=per["appends"], lists=per["lists"],
        commits=per["commits"], records=rec, ledger_bytes=round(lb, 1), state_bytes=round(sb, 1),
    )
    if workload == "w3_wait_until_due":
        ops["list_due_calls"] = c1["list_due"] - c0["list_due"]
        ops["cycles"] = extra.get("cycles")
    log(f"[pilot] {workload}/{store} per run: " + json.dumps(ops))
    compare_with_readme(workload, store, ops)
    out = {workload: ops}
    if with_w4:
        counter.enabled = True
        c0 = counter.snapshot()
        _, total = drive_w4(K, rt, ids)
        c1 = counter.snapshot()
        counter.enabled = False
        ops4 = {k: (c1[k] - c0[k]) / PILOT_RUNS for k in ("saves", "loads", "appends", "lists", "commits")}
        ops4["records"] = total / PILOT_RUNS
        log(f"[pilot] w4_ledger_read/{store} per run: " + json.dumps(ops4))
        compare_with_readme("w4_ledger_read", store, ops4)
        out["w4_ledger_read"] = ops4
    return out


def result_line(workload, store, runs, steps, seconds, rss, rec, commits, state_bytes, extra=None):
    line = {
        "workload": workload,
        "store": store,
        "runs": runs,
        "steps": steps,
        "seconds": round(seconds, 6),
        "steps_per_s": round(steps / seconds, 1) if seconds > 0 else None,
        "runs_per_s": round(runs / seconds, 1) if seconds > 0 else None,
        "peak_rss_mb": rss,
        "ledger_records_per_run": round(rec, 3),
        "commits_per_run": int(commits) if float(commits) == int(commits) else commits,
        "state_json_bytes": state_bytes,
    }
    if extra:
        line.update(extra)
    return line


def child_main(args) -> int:
    K = import_kernel()
    wfs = build_workflows(K)
    store = args.store
    group = args.group.split(",")
    n = args.runs
    base = args.dir
    os.makedirs(base, exist_ok=True)
    results = []
    try:
        if group[0] == "w1_chain":
            report = set((args.report or "").split(","))
            want_w1 = "w1_chain" in report
            want_w4 = "w4_ledger_read" in group
            pilot = run_pilot(K, wfs, store, "w1_chain", os.path.join(base, "pilot"), with_w4=want_w4)
            stores = make_store(K, store, os.path.join(base, "timed"))
            rt = K.Runtime(run_store=stores.run_store, ledger_store=stores.ledger_store)
            s0 = STEPS[0]
            f0 = minor_faults()
            seconds, ids, _ = drive_start_tick(K, rt, wfs["w1_chain"], n, "w1")
            faults_w1 = minor_faults() - f0
            steps = STEPS[0] - s0
            rss_w1 = peak_rss_mb()
            rec, lb, sb = verify(K, "w1_chain", stores, ids)
            require(steps == 10 * n, f"w1: counted {steps} steps, expected {10 * n}")
            if want_w1:
                p = pilot["w1_chain"]
                results.append(result_line(
                    "w1_chain", store, n, steps, seconds, rss_w1, rec,
                    p["commits"], round(sb), {"ledger_json_bytes_per_run": round(lb), "ops_per_run": p,
                                              "page_faults_per_run": round(faults_w1 / n, 2)},
                ))
            if want_w4:
                f0 = minor_faults()
                w4_seconds, total = drive_w4(K, rt, ids)
                faults_w4 = minor_faults() - f0
                rss_w4 = peak_rss_mb()
                require(total == int(round(rec * n)), f"w4: read {total} records, expected {rec * n}")
                results.append(result_line(
                    "w4_ledger_read", store, n, total, w4_seconds, rss_w4, total / n, 0, None,
                    {"ops_per_run": pilot["w4_ledger_read"], "page_faults_per_run": round(faults_w4 / n, 2)},
                ))
        else:
            workload = group[0]
            pilot = run_pilot(K, wfs, store, workload, os.path.join(base, "pilot"), with_w4=False)[workload]
            stores = make_store(K, store, os.path.join(base, "timed"))
            rt = K.Runtime(run_store=stores.run_store, ledger_store=stores.ledger_store)
            wf = wfs[workload]
            s0 = STEPS[0]
            extra = {}
            f0 = minor_faults()
            if workload == "w2_ask_resume":
                seconds, ids, extra = drive_w2(K, rt, wf, n)
            elif workload == "w3_wait_until_past":
                seconds, ids, extra = drive_start_tick(K, rt, wf, n, "w3")
            elif workload == "w3_wait_until_due":
                reg = K.WorkflowRegistry()
                reg.register(wf)
                sched = K.Scheduler(runtime=rt, registry=reg)
                seconds, ids, extra = drive_w3b(K, rt, wf, n, sched)
                extra["phase_a_s"] = round(extra["phase_a_s"], 6)
                extra["phase_b_s"] = round(extra["phase_b_s"], 6)
            else:
                raise ValueError(workload)
            extra["page_faults_per_run"] = round((minor_faults() - f0) / n, 2)
            steps = STEPS[0] - s0
            rss = peak_rss_mb()
            rec, lb, sb = verify(K, workload, stores, ids)
            require(steps == 2 * n, f"{workload}: counted {steps} steps, expected {2 * n}")
            extra.update({"ledger_json_bytes_per_run": round(lb), "ops_per_run": pilot})
            results.append(result_line(workload, store, n, steps, seconds, rss, rec, pilot["commits"], round(sb), extra))
    except CheckFailed as e:
        log(f"CHECK FAILED [{store} {','.join(group)}]: {e}")
        return 3
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    for r in results:
        print("RESULT " + json.dumps(r), flush=True)
    return 0


# ---------------------------------------------------------------------------
# Parent: repeats (outer) x stores x workload groups, one fresh process each
# ---------------------------------------------------------------------------


def parent_main(args) -> int:
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for s in stores:
        if s not in ALL_STORES:
            log(f"unknown store {s!r}")
            return 2
    for w in workloads:
        if w not in ALL_WORKLOADS:
            log(f"unknown workload {w!r}")
            return 2
    # Process groups: W1 and W4 share one process (W4 reads W1's runs; if only
    # W4 is requested, W1 still runs in that process but is not reported).
    groups = []
    if "w1_chain" in workloads or "w4_ledger_read" in workloads:
        groups.append(["w1_chain"] + (["w4_ledger_read"] if "w4_ledger_read" in workloads else []))
    for w in ALL_WORKLOADS:
        if w in workloads and w not in ("w1_chain", "w4_ledger_read"):
            groups.append([w])

    base = args.dir or tempfile.mkdtemp(prefix="peer_bench_")
    os.makedirs(base, exist_ok=True)
    samples: dict = {}
    failed = set()
    env = dict(os.environ)
    for rep in range(1, args.repeats + 1):
        for store in stores:
            for g in groups:
                gname = "+".join(g)
                if any((w, store) in failed for w in g):
                    continue
                d = os.path.join(base, f"rep{rep}", store, gname)
                cmd = [
                    sys.executable, os.path.abspath(__file__), "--child",
                    "--store", store, "--group", ",".join(g),
                    "--report", ",".join(w for w in g if w in workloads),
                    "--runs", str(args.runs), "--dir", d,
                ]
                if args.keep:
                    cmd.append("--keep")
                log(f"[rep {rep}] {store} {gname} ...")
                proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
                if proc.returncode != 0:
                    log(f"[rep {rep}] {store} {gname}: FAILED (exit {proc.returncode}); no number reported")
                    for w in g:
                        failed.add((w, store))
                    continue
                for line in proc.stdout.splitlines():
                    if not line.startswith("RESULT "):
                        continue
                    r = json.loads(line[len("RESULT "):])
                    samples.setdefault((r["workload"], r["store"]), []).append(r)
                    log(f"[rep {rep}] {r['workload']}/{store}: {r['seconds']} s, {r['runs_per_s']} runs/s")
    if not args.dir and not args.keep:
        shutil.rmtree(base, ignore_errors=True)

    for store in stores:
        for w in ALL_WORKLOADS:
            if w not in workloads or (w, store) in failed:
                continue
            lst = samples.get((w, store))
            if not lst:
                failed.add((w, store))
                continue
            ordered = sorted(lst, key=lambda r: r["seconds"])
            median = dict(ordered[(len(ordered) - 1) // 2])
            median["samples"] = [r["seconds"] for r in lst]
            median["repeats"] = len(lst)
            print(json.dumps(median), flush=True)
    if failed:
        log("failed: " + ", ".join(f"{w}/{s}" for w, s in sorted(failed)))
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stores", default=",".join(ALL_STORES))
    ap.add_argument("--workloads", default=",".join(ALL_WORKLOADS))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=None, help="working directory for the json/sqlite stores (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the store files")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--group", help=argparse.SUPPRESS)
    ap.add_argument("--report", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child_main(args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
