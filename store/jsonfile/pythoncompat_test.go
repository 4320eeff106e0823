package jsonfile_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// pyAskRun is run_<id>.json exactly as the Python runtime
// (abstractruntime 0.4.28: Runtime.start + tick, JsonFileRunStore) wrote it
// for an ASK_USER effect with payload {"prompt": "Pick a size", "choices":
// [1, 2, {"label": "Large", "value": 3}]} and start vars
// {"_run_lifecycle": {"source": "gateway", "retention": {"mode": "ttl",
// "ttl_s": 3600.0}}}. _handle_ask_user stores list(choices) as is.
const pyAskRunID = "bf50475d-008a-4ce2-952b-1065e4e3057b"

const pyAskRun = `{
  "run_id": "bf50475d-008a-4ce2-952b-1065e4e3057b",
  "workflow_id": "wf_ask",
  "status": "waiting",
  "current_node": "ask",
  "vars": {
    "_run_lifecycle": {
      "source": "gateway",
      "retention": {
        "mode": "ttl",
        "ttl_s": 3600.0
      }
    },
    "_limits": {
      "max_iterations": 25,
      "current_iteration": 0,
      "max_tokens": 32768,
      "max_output_tokens": null,
      "max_input_tokens": null,
      "estimated_tokens_used": 0,
      "max_history_messages": -1,
      "warn_iterations_pct": 80,
      "warn_tokens_pct": 80
    },
    "_runtime": {
      "node_traces": {
        "ask": {
          "node_id": "ask",
          "steps": [
            {
              "ts": "2026-12-01T04:51:13.788269+00:00",
              "node_id": "ask",
              "status": "waiting",
              "idempotency_key": "57539724d5e4fe0710b40e7d8ad2c771",
              "reused_prior_result": false,
              "effect": {
                "type": "ask_user",
                "payload": {
                  "prompt": "Pick a size",
                  "choices": [
                    1,
                    2,
                    {
                      "label": "Large",
                      "value": 3
                    }
                  ]
                },
                "result_key": "size"
              },
              "duration_ms": 0.6941239989828318,
              "wait": {
                "reason": "user",
                "wait_key": "user:bf50475d-008a-4ce2-952b-1065e4e3057b:ask",
                "until": null,
                "resume_to_node": "done",
                "result_key": "size",
                "prompt": "Pick a size",
                "choices": [
                  1,
                  2,
                  {
                    "label": "Large",
                    "value": 3
                  }
                ],
                "allow_free_text": true,
                "details": null
              }
            }
          ],
          "updated_at": "2026-12-01T04:51:13.788295+00:00"
        }
      }
    },
    "_temp": {
      "prev_node_id": "ask",
      "prev_next_node": "done"
    }
  },
  "waiting": {
    "reason": "user",
    "wait_key": "user:bf50475d-008a-4ce2-952b-1065e4e3057b:ask",
    "until": null,
    "resume_to_node": "done",
    "result_key": "size",
    "prompt": "Pick a size",
    "choices": [
      1,
      2,
      {
        "label": "Large",
        "value": 3
      }
    ],
    "allow_free_text": true,
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-12-01T04:51:13.786676+00:00",
  "updated_at": "2026-12-01T04:51:13.788328+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`

// pyHoursUntilRun: a WAIT_UNTIL run whose until is Python's
// datetime.isoformat(timespec="hours") ("2026-01-02T10+00:00"); Python
// stores payload.until as an opaque string and compares it as text.
const pyHoursUntilRunID = "3f1d2c4b-8e7a-4a9b-b1c2-d3e4f5a6b7c8"

const pyHoursUntilRun = `{
  "run_id": "3f1d2c4b-8e7a-4a9b-b1c2-d3e4f5a6b7c8",
  "workflow_id": "wf_wait",
  "status": "waiting",
  "current_node": "wait",
  "vars": {},
  "waiting": {
    "reason": "until",
    "wait_key": null,
    "until": "2026-01-02T10+00:00",
    "resume_to_node": "done",
    "result_key": "woke",
    "prompt": null,
    "choices": null,
    "allow_free_text": true,
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-01-01T09:00:00.123456+00:00",
  "updated_at": "2026-01-01T09:00:00.234567+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`

// pyCommandsJSONL: commands.jsonl as JsonlCommandStore.append wrote it; the
// second command's ts is the caller's string, which Python keeps as given.
const pyCommandsJSONL = `{"command_id": "c1", "run_id": "r1", "type": "pause", "payload": {}, "ts": "2026-01-01T09:00:01.000001+00:00", "client_id": null, "seq": 1}
{"command_id": "c2", "run_id": "r1", "type": "resume", "payload": {"text": "go"}, "ts": "1767258001000", "client_id": "web", "seq": 2}
`

// Python's list_run_index reads retention.ttl_s with int(raw), so the
// float 3600.0 the run holds gives ttl_s 3600; store.RunLifecycle
// (positiveInt) refused json.Number("3600.0") and dropped it.
func TestPythonLifecycleTTLFloat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "run_"+pyAskRunID+".json"), pyAskRun)
	s := open(t, dir, true)
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("RunIndex = %v, %v", rows, err)
	}
	ret, _ := rows[0].RunLifecycle["retention"].(map[string]any)
	if ret["ttl_s"] != int64(3600) {
		t.Fatalf("run_lifecycle = %#v; want retention.ttl_s 3600 as Python's list_run_index gives", rows[0].RunLifecycle)
	}
}

// A WAIT_UNTIL deadline in a form Python's isoformat() writes
// (timespec="hours") made the whole run unreadable: RunGet failed, lists
// and the due index skipped it, while Python loads and schedules it.
func TestPythonUntilIsoformatHours(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "run_"+pyHoursUntilRunID+".json"), pyHoursUntilRun)
	s := open(t, dir, true)
	r, err := s.RunGet(t.Context(), pyHoursUntilRunID)
	if err != nil {
		t.Fatalf("RunGet of a Python WAIT_UNTIL run: %v", err)
	}
	if r.Waiting == nil || r.Waiting.Until.IsZero() {
		t.Fatalf("waiting = %+v; want until 2026-01-02T10:00:00+00:00", r.Waiting)
	}
}

// A command line the store could not decode (here: a ts Python accepted as
// given) was left out of the seq counter, so the next append reused its
// seq: commands.jsonl then held two records with seq 2, and a consumer
// whose cursor was 2 never saw the new one.
func TestPythonCommandSeqNotReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "commands.jsonl"), pyCommandsJSONL)
	s := open(t, dir, true)
	res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{RunID: "r1", Type: "cancel"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seq != 3 {
		t.Fatalf("CommandAppend seq = %d; want 3 (commands.jsonl already holds seq 1 and 2)", res.Seq)
	}
}

// Python's delete_by_run keeps every other line as it is; ours rewrote
// the file from the records it decoded and so deleted the other run's
// command it could not decode.
func TestPythonCommandDeleteKeepsOtherRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "commands.jsonl")
	writeFile(t, path, strings.Replace(pyCommandsJSONL, `"run_id": "r1", "type": "pause"`, `"run_id": "r0", "type": "pause"`, 1))
	s := open(t, dir, true)
	if n, err := s.CommandDeleteByRun(t.Context(), "r0"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v", n, err)
	}
	if got := readFile(t, path); !strings.Contains(got, `"command_id": "c2"`) {
		t.Fatalf("after deleting run r0's command, commands.jsonl = %q; run r1's command c2 is gone", got)
	}
}

// A ts Python kept as its client gave it reads back as that text, a time
// or not, and lists with it (gateway-api §4.1: ts is stored as given).
func TestPythonCommandTSTextReadAsGiven(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "commands.jsonl"), pyCommandsJSONL)
	s := open(t, dir, true)
	got, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("CommandListAfter = %d commands, %v; want 2", len(got), err)
	}
	if got[0].TS.IsZero() || got[0].TSValue() != "2026-01-01T09:00:01.000001+00:00" {
		t.Errorf("c1 ts: TS %v, wire %v; want the time, as written", got[0].TS, got[0].TSValue())
	}
	if got[1].TSText() != "1767258001000" || got[1].TSValue() != "1767258001000" {
		t.Errorf("c2 ts: text %q, wire %v; want the client's text 1767258001000 as given", got[1].TSText(), got[1].TSValue())
	}
}
