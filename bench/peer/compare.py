#!/usr/bin/env python3
"""Same-session comparison of the Go runtime with the Python peer.

Runs the two harnesses interleaved, as ../shared/bench/README.md asks (a slow
period of the shared machine lands on one sample of each side, not on one
side): for each repeat, bench.py (Python, one fresh process per sample) then
`abstractgateway bench` (Go, likewise), each with --repeats 1. Then it takes,
per (workload, store), the sample with the median seconds on each side and
prints a Markdown table with go/python ratios, followed by Go's ceilings
(median of every before/after sample).

Usage (from the repository root):
  go build -o /tmp/agw ./cmd/abstractgateway
  [PEER_SRC=/path/to/src] python3 bench/peer/compare.py --go /tmp/agw \\
      [--runs 1000] [--repeats 3] [--out DIR]

The raw JSON lines of every sample are kept in --out (default: a temporary
directory, printed on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ["w1_chain", "w2_ask_resume", "w3_wait_until_past", "w3_wait_until_due", "w4_ledger_read"]
GO_STORES = ["memory", "json", "sqlite", "sqlite_full", "sqlite_shared", "json_fsync"]
# Go store kinds without a Python counterpart, compared with the nearest one.
PEER_OF = {"sqlite_shared": "sqlite", "json_fsync": "json"}


def run(cmd: list[str], out_path: str, cwd: str) -> None:
    with open(out_path, "w") as out, open(out_path + ".err", "w") as err:
        subprocess.run(cmd, stdout=out, stderr=err, cwd=cwd, check=False)


def load(paths: list[str]):
    rows: dict = {}
    ceilings: dict = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                d = json.loads(line)
                if "ceiling" in d:
                    ceilings.setdefault(d["ceiling"], []).extend(d["samples"])
                else:
                    rows.setdefault((d["workload"], d["store"]), []).append(d)
    return rows, ceilings


def median_sample(samples: list[dict]) -> tuple[dict, list[float]]:
    ordered = sorted(samples, key=lambda d: d["seconds"])
    return ordered[(len(ordered) - 1) // 2], [d["seconds"] for d in ordered]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--go", required=True, help="the abstractgateway binary")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="bench_vs_peer_")
    os.makedirs(out, exist_ok=True)
    print(f"compare: raw lines in {out}", file=sys.stderr)
    work = tempfile.mkdtemp(prefix="bench_work_")
    py_files, go_files = [], []
    for rep in range(1, args.repeats + 1):
        print(f"compare: repeat {rep}: python", file=sys.stderr, flush=True)
        py = os.path.join(out, f"py_{rep}.jsonl")
        run([sys.executable, os.path.join(HERE, "bench.py"), "--runs", str(args.runs), "--repeats", "1"], py, work)
        py_files.append(py)
        print(f"compare: repeat {rep}: go", file=sys.stderr, flush=True)
        go = os.path.join(out, f"go_{rep}.jsonl")
        run([os.path.abspath(args.go), "bench", "--runs", str(args.runs), "--repeats", "1",
             "--stores", ",".join(GO_STORES)], go, work)
        go_files.append(go)
    py_rows, _ = load(py_files)
    go_rows, ceilings = load(go_files)

    print("| workload | store | Go runs/s | Python runs/s | go/python | page faults/run Go (Python) "
          "| Go samples (s) | Python samples (s) |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for store in GO_STORES:
        for w in WORKLOADS:
            g = go_rows.get((w, store))
            if not g:
                continue
            gm, gs = median_sample(g)
            p = py_rows.get((w, PEER_OF.get(store, store)))
            if p:
                pm, ps = median_sample(p)
                ratio = f"{gm['runs_per_s'] / pm['runs_per_s']:.2f}×"
                prate = f"{pm['runs_per_s']:,.1f}"
                pfaults = pm.get("page_faults_per_run", "–")
            else:
                ratio, prate, ps, pfaults = "–", "–", [], "–"
            faults = f"{gm.get('page_faults_per_run', '–')} ({pfaults})"
            print(f"| {w} | {store} | {gm['runs_per_s']:,.1f} | {prate} | {ratio} | {faults} | "
                  f"{', '.join(f'{x:.4g}' for x in gs)} | {', '.join(f'{x:.4g}' for x in ps)} |")
    print()
    print("| ceiling (Go, same session) | ops/s (median) | samples |")
    print("|---|---:|---|")
    for name, samples in ceilings.items():
        print(f"| {name} | {statistics.median(samples):,.1f} | {', '.join(f'{x:.0f}' for x in samples)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
