package durable_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// pyRecordsAndRunsScript builds pseudo-random StepRecords and RunStates (a
// fixed seed) as AbstractRuntime 0.4.28 holds them (dataclass field order,
// asdict), with tricky values in effect payloads, results, vars and
// outputs, and prints, for each, the texts Python writes: a record's
// JSONL line (storage/json_files.py JsonlLedgerStore.append, json.dumps(
// asdict(record), ensure_ascii=False), also the SQLite record_json) and its
// hash-chain text (storage/ledger_chain.py compute_record_hash: record_hash
// and signature dropped, sort_keys, separators (",", ":"),
// ensure_ascii=False); a run's run_<id>.json (JsonFileRunStore.save,
// indent=2, ensure_ascii=False) and its SQLite run_json (default
// separators). Nested objects are built with their keys in code-point
// order: we write keys sorted (docs/compatibility.md, "object key order").
// A wait's string fields are never "": we write an empty one as null
// (docs/compatibility.md, "empty strings in nullable fields").
const pyRecordsAndRunsScript = `
import json, random, sys
from datetime import datetime, timedelta, timezone

rnd = random.Random(20240601)
RANGES = [(0x00, 0x7f), (0x20, 0x7e), (0x20, 0x7e), (0x80, 0xff), (0x2028, 0x2029),
          (0x4e00, 0x9fff), (0xe000, 0xffff), (0x10000, 0x10ffff), (0x1f600, 0x1f64f)]
NUMS = [0, -1, 1.0, -0.0, 0.5, 1e16, 1e-05, 5e-324, 1.7976931348623157e308, 2**63, -2**63 - 1,
        2**64, 10**30, float("nan"), float("inf"), float("-inf"), 0.1 + 0.2, 123456789012345.0]

def s(n=10):
    out = []
    for _ in range(rnd.randint(0, n)):
        lo, hi = rnd.choice(RANGES)
        out.append(chr(rnd.randint(lo, hi)))
    return "".join(out)

def ne():
    return s() or "x"

def num():
    k = rnd.randint(0, 3)
    if k == 0: return rnd.choice(NUMS)
    if k == 1: return rnd.randint(-2**70, 2**70) >> rnd.randint(0, 70)
    if k == 2: return rnd.uniform(-1e6, 1e6) * 10 ** rnd.randint(-20, 20)
    return rnd.randint(-1000, 1000)

def val(d=0):
    k = rnd.randint(0, 9 if d < 5 else 5)
    if k == 0: return rnd.choice([None, True, False])
    if k in (1, 2): return num()
    if k in (3, 4, 5): return s()
    if k in (6, 7): return [val(d + 1) for _ in range(rnd.randint(0, 4))]
    return obj(d + 1)

def obj(d=0):
    keys = sorted({s(6) for _ in range(rnd.randint(0, 5))})
    return {k: val(d) for k in keys}

def ts():
    t = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=rnd.randint(0, 10**8), microseconds=rnd.choice([0, rnd.randint(0, 999999)]))
    return t.isoformat()

def maybe(f):
    return f() if rnd.random() < 0.5 else None

records, runs = [], []
for i in range(300):
    rec = {
        "run_id": "run-%d" % i, "step_id": "step-%d" % i, "node_id": s(8) or "n",
        "status": rnd.choice(["started", "completed", "waiting", "failed"]),
        "effect": maybe(lambda: {"type": rnd.choice(["llm_call", "tool_calls", "ask_user", "wait_event"]), "payload": obj(), "result_key": maybe(lambda: s(5))}),
        "result": maybe(obj), "error": maybe(s), "started_at": ts(), "ended_at": maybe(ts),
        "actor_id": maybe(s), "session_id": maybe(s), "attempt": rnd.randint(1, 3),
        "idempotency_key": maybe(lambda: "%032x" % rnd.getrandbits(128)),
        "prev_hash": maybe(lambda: "%064x" % rnd.getrandbits(256)),
        "record_hash": "%064x" % rnd.getrandbits(256), "signature": None,
    }
    clean = dict(rec); clean.pop("record_hash"); clean.pop("signature")
    records.append([json.dumps(rec, ensure_ascii=False),
                    json.dumps(clean, sort_keys=True, separators=(",", ":"), ensure_ascii=False)])
    waiting = None
    status = rnd.choice(["running", "waiting", "completed", "failed"])
    if status == "waiting":
        waiting = {"reason": rnd.choice(["event", "user", "until"]), "wait_key": maybe(ne), "until": None,
                   "resume_to_node": maybe(ne), "result_key": maybe(ne), "prompt": maybe(ne),
                   "choices": maybe(lambda: [s() for _ in range(rnd.randint(0, 3))]),
                   "allow_free_text": rnd.choice([True, False]), "details": maybe(obj)}
        if waiting["reason"] == "until":
            waiting["until"] = ts()
    run = {"run_id": "run-%d" % i, "workflow_id": s(8) or "wf", "status": status, "current_node": s(8) or "n",
           "vars": obj(), "waiting": waiting, "output": maybe(obj) if status == "completed" else None,
           "error": maybe(s) if status == "failed" else None, "created_at": ts(), "updated_at": ts(),
           "actor_id": maybe(s), "session_id": maybe(s), "parent_run_id": maybe(s)}
    runs.append([json.dumps(run, ensure_ascii=False, indent=2), json.dumps(run, ensure_ascii=False)])
json.dump({"records": records, "runs": runs}, sys.stdout)
`

// TestRecordsAndRunsRoundTripPythonTexts: a record or run Python wrote
// decodes and encodes back to the same bytes in the style it was written in
// (JSONL line, run file, SQLite run_json), and a record's hash-chain text is
// the one Python hashes. Promises: record.go/run.go (UnmarshalRecord,
// MarshalRecord, UnmarshalRun, MarshalRun) and runtime-model spec §4.3,
// §4.6, §8.4.
func TestRecordsAndRunsRoundTripPythonTexts(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot compare with Python's json.dumps")
	}
	script := filepath.Join(t.TempDir(), "records.py")
	if err := os.WriteFile(script, []byte(pyRecordsAndRunsScript), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(py, script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	var texts struct {
		Records [][2]string `json:"records"`
		Runs    [][2]string `json:"runs"`
	}
	if err := json.Unmarshal(out, &texts); err != nil || len(texts.Records) == 0 || len(texts.Runs) == 0 {
		t.Fatalf("python3 output: %v", err)
	}
	var diffs []string
	check := func(what string, got []byte, err error, want string) {
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %v\n  want %q", what, err, want))
		} else if string(got) != want {
			diffs = append(diffs, fmt.Sprintf("%s:\n   got %q\n  want %q", what, got, want))
		}
	}
	for i, rt := range texts.Records {
		line, hashed := rt[0], rt[1]
		rec, err := durable.UnmarshalRecord([]byte(line))
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("record %d: %v in %q", i, err, line))
			continue
		}
		got, err := durable.MarshalRecord(rec, pyjson.Line)
		check(fmt.Sprintf("record %d line", i), got, err, line)
		got, err = pyjson.Marshal(rec.JSONValue(false), pyjson.Canonical)
		check(fmt.Sprintf("record %d hash text", i), got, err, hashed)
	}
	for i, rt := range texts.Runs {
		for j, style := range []pyjson.Style{pyjson.Pretty, pyjson.Line} {
			run, err := durable.UnmarshalRun([]byte(rt[j]))
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("run %d: %v in %q", i, err, rt[j]))
				continue
			}
			got, err := durable.MarshalRun(run, style)
			check(fmt.Sprintf("run %d style %+v", i, style), got, err, rt[j])
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%d of %d records and %d runs differ from Python's texts; the first:\n%s",
			len(diffs), len(texts.Records), len(texts.Runs), strings.Join(diffs[:min(10, len(diffs))], "\n"))
	}
}
