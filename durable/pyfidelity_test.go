package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// pyUntilRunTemplate is run_<id>.json as the Python runtime (abstractruntime
// 0.4.28: Runtime.start + tick, JsonFileRunStore) wrote it for a WAIT_UNTIL
// effect with payload {"until": "2030-01-01t00:00:00z"} (vars._runtime
// abridged). _handle_wait_until stores WaitState(until=str(until)) without
// parsing it, and JsonFileRunStore.load / _runstate_from_dict read it back
// as a plain string, so Python loads and schedules this run.
const pyUntilRunTemplate = `{
  "run_id": "08c92d56-6074-42bb-84ce-29e896bd6121",
  "workflow_id": "wf",
  "status": "waiting",
  "current_node": "listen",
  "vars": {
    "_limits": {"max_iterations": 25, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null, "max_input_tokens": null, "estimated_tokens_used": 0, "max_history_messages": -1, "warn_iterations_pct": 80, "warn_tokens_pct": 80},
    "_temp": {"prev_node_id": "listen", "prev_next_node": "done"}
  },
  "waiting": {
    "reason": "until",
    "wait_key": null,
    "until": "UNTIL",
    "resume_to_node": "done",
    "result_key": "w",
    "prompt": null,
    "choices": null,
    "allow_free_text": true,
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-12-01T06:00:10.515822+00:00",
  "updated_at": "2026-12-01T06:00:10.517753+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`

// A WAIT_UNTIL deadline is whatever string the node gave (Python never
// parses it). Valid ISO 8601 / RFC 3339 spellings other than the few
// layouts ParseTime knew made UnmarshalRun refuse the whole run: the JSON
// store then skipped the file ("skipping unreadable run file"), so a run
// Python wrote and still schedules vanished for us.
func TestFidelityPythonUntilSpellingsDecode(t *testing.T) {
	t.Parallel()
	for until, want := range map[string]time.Time{
		// RFC 3339 §5.6: "T" and "Z" may be lower case (lower-case z alone is accepted).
		"2030-01-01t00:00:00z": time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		// ISO 8601 offset given in hours only.
		"2030-01-01T01:00:00+01": time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		// ISO 8601 basic format (Python 3.11 datetime.fromisoformat reads it).
		"20300101T000000Z": time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		text := strings.Replace(pyUntilRunTemplate, "UNTIL", until, 1)
		r, err := durable.UnmarshalRun([]byte(text))
		if err != nil {
			t.Errorf("until %q (written by Python's WAIT_UNTIL handler): UnmarshalRun refused the run: %v", until, err)
			continue
		}
		if r.Waiting == nil || !r.Waiting.Until.Equal(want) {
			t.Errorf("until %q: decoded waiting %+v; want until %v", until, r.Waiting, want)
		}
	}
}

// pyNullPayloadRecord is the STARTED ledger line Python 0.4.28 writes
// (Runtime._execute_effect_with_retry -> StepRecord.start, which copies
// effect.payload as it is; JsonlLedgerStore.append + HashChainedLedgerStore)
// for a node returning Effect(type=WAIT_EVENT, payload=None): Effect does not
// validate its payload, the record is appended before the handler runs (the
// handler then fails and a FAILED record with the same effect follows).
const pyNullPayloadRecord = `{"run_id": "run-1", "step_id": "s1", "node_id": "listen", "status": "started", "effect": {"type": "wait_event", "payload": null, "result_key": "evt"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "k1", "prev_hash": null, "record_hash": "1c35b117adfda60a87db895e6f3d038c5642f6e5f43f95ec3c5c853c60c3b4a8", "signature": null}`

// decodeEffect turned "payload": null into {} (effect.go), so the record
// re-encoded (a copy, an export, the hash chain's canonical text) differed
// from what Python wrote and hashed.
func TestFidelityEffectNullPayloadRoundTrips(t *testing.T) {
	t.Parallel()
	r, err := durable.UnmarshalRecord([]byte(pyNullPayloadRecord))
	if err != nil {
		t.Fatal(err)
	}
	got, err := durable.MarshalRecord(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != pyNullPayloadRecord {
		t.Fatalf("Python ledger line re-encoded as\n%s\nwant it unchanged:\n%s", got, pyNullPayloadRecord)
	}
}

// Python 0.4.28 writes what a node hands it without checking its type:
// StepRecord.start copies effect.payload as it is (here a node returned
// Effect(type=LLM_CALL, payload=["hello"]); the STARTED and FAILED records
// are appended), and tick() sets run.output = plan.complete_output (here
// complete_output="all done"). Python's stores read both back (the ledger
// as dicts, RunState.output = data.get("output")). Ours refused them
// (decodeEffect / RunState.set used asObject): LedgerList dropped the record
// ("skipping undecodable ledger record") and the JSON store skipped the run.
func TestFidelityPythonNodeSuppliedShapesDecode(t *testing.T) {
	t.Parallel()
	rec := `{"run_id": "b95ad6df-7229-4261-9ee6-ef336038916c", "step_id": "20b9e555-23f8-477b-be7e-59ce00914c5a", "node_id": "lst", "status": "started", "effect": {"type": "llm_call", "payload": ["hello"], "result_key": "w"}, "result": null, "error": null, "started_at": "2026-12-01T06:01:03.612341+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "6f1e1b5b0e1c4e8a9f0d2c3b4a596877", "prev_hash": null, "record_hash": null, "signature": null}`
	if r, err := durable.UnmarshalRecord([]byte(rec)); err != nil {
		t.Errorf("ledger record with a list payload (Python reads it): %v", err)
	} else if got, _ := durable.MarshalRecord(r, pyjson.Line); string(got) != rec {
		t.Errorf("ledger record re-encoded as\n%s\nwant\n%s", got, rec)
	}
	run := `{"run_id": "5d0c6a8e-2f4b-4c1d-9e7a-3b8f1c2d4e5f", "workflow_id": "wf2", "status": "completed", "current_node": "fin", "vars": {"_limits": {"max_iterations": 25, "current_iteration": 0}}, "waiting": null, "output": "all done", "error": null, "created_at": "2026-12-01T06:01:03.613001+00:00", "updated_at": "2026-12-01T06:01:03.613502+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
	if r, err := durable.UnmarshalRun([]byte(run)); err != nil {
		t.Errorf("run with output \"all done\" (Python loads it): %v", err)
	} else if got, _ := durable.MarshalRun(r, pyjson.Line); !strings.Contains(string(got), `"output": "all done"`) {
		t.Errorf("run re-encoded without its output: %s", got)
	}
}
