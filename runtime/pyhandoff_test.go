package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// Runs handed between the Python runtime and ours on the same data: each
// test embeds the bytes Python wrote and checks that ours carries the run
// on as Python would.

// handoffLoopWorkflow is a chat loop registered identically on both sides:
// "llm" calls the model with "turn:<last user text>" (or completes on
// "bye") and moves to "ask"; "ask" asks the user and resumes at "llm".
func handoffLoopWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "wf_loop", Entry: "llm", Nodes: map[string]runtime.NodeFunc{
		"llm": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			text := "start"
			if m, ok := run.Vars["msg"].(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					text = s
				}
			}
			if text == "bye" {
				return runtime.Complete(map[string]any{"reply": run.Vars["reply"]}), nil
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": "turn:" + text}, ResultKey: "reply"}, "ask"), nil
		},
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "more?"}, ResultKey: "msg"}, "llm"), nil
		},
	}}
}

// handoffLoopRunID / handoffLoopRun / handoffLoopLedger: the run and ledger
// of wf_loop exactly as they were on disk after this sequence:
//  1. Go (jsonfile store) started the run; the process died inside the
//     LLM_CALL of node "llm" (prompt "turn:start"), leaving the checkpoint
//     taken with its STARTED record, which holds
//     vars._runtime.effect_in_flight {node: "llm", payload "turn:start"}
//     (its checkpoint_at, the checkpoint's updated_at, added here as the
//     current Go writes it);
//  2. Python (JsonFileRunStore/JsonlLedgerStore) ticked the run: it re-ran
//     node "llm" (same prompt; nothing had completed), moved to "ask" and
//     now waits for the user. Python keeps unknown vars keys, so the stale
//     effect_in_flight is still in the file Python wrote.
const handoffLoopRunID = "b367ea43-0475-4434-be16-2c61f30a8a30"

const handoffLoopRun = `{
  "run_id": "b367ea43-0475-4434-be16-2c61f30a8a30",
  "workflow_id": "wf_loop",
  "status": "waiting",
  "current_node": "ask",
  "vars": {
    "_limits": {
      "current_iteration": 0,
      "estimated_tokens_used": 0,
      "max_history_messages": -1,
      "max_input_tokens": null,
      "max_iterations": 50,
      "max_output_tokens": null,
      "max_tokens": 32768,
      "warn_iterations_pct": 80,
      "warn_tokens_pct": 80
    },
    "_runtime": {
      "effect_in_flight": {
        "effect": {
          "payload": {
            "prompt": "turn:start"
          },
          "result_key": "reply",
          "type": "llm_call"
        },
        "checkpoint_at": "2026-12-01T06:53:40.101010+00:00",
        "next_node": "ask",
        "node": "llm",
        "plan_node": "llm"
      },
      "node_traces": {
        "llm": {
          "node_id": "llm",
          "steps": [
            {
              "ts": "2026-12-01T06:53:40.357989+00:00",
              "node_id": "llm",
              "status": "completed",
              "idempotency_key": "3907e77a0d0760b072292fac68e7b015",
              "reused_prior_result": false,
              "effect": {
                "type": "llm_call",
                "payload": {
                  "prompt": "turn:start"
                },
                "result_key": "reply"
              },
              "duration_ms": 0.7346339989453554,
              "result": {
                "content": "ans:turn:start"
              }
            }
          ],
          "updated_at": "2026-12-01T06:53:40.358015+00:00"
        },
        "ask": {
          "node_id": "ask",
          "steps": [
            {
              "ts": "2026-12-01T06:53:40.359427+00:00",
              "node_id": "ask",
              "status": "waiting",
              "idempotency_key": "64390ab1a4be08d6aa454bbb300b237e",
              "reused_prior_result": false,
              "effect": {
                "type": "ask_user",
                "payload": {
                  "prompt": "more?"
                },
                "result_key": "msg"
              },
              "duration_ms": 0.2737380000326084,
              "wait": {
                "reason": "user",
                "wait_key": "user:b367ea43-0475-4434-be16-2c61f30a8a30:ask",
                "until": null,
                "resume_to_node": "llm",
                "result_key": "msg",
                "prompt": "more?",
                "choices": null,
                "allow_free_text": true,
                "details": null
              }
            }
          ],
          "updated_at": "2026-12-01T06:53:40.359443+00:00"
        }
      }
    },
    "reply": {
      "content": "ans:turn:start"
    },
    "_temp": {
      "prev_node_id": "ask",
      "prev_next_node": "llm"
    }
  },
  "waiting": {
    "reason": "user",
    "wait_key": "user:b367ea43-0475-4434-be16-2c61f30a8a30:ask",
    "until": null,
    "resume_to_node": "llm",
    "result_key": "msg",
    "prompt": "more?",
    "choices": null,
    "allow_free_text": true,
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-12-01T06:53:40.156515+00:00",
  "updated_at": "2026-12-01T06:53:40.359468+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`

const handoffLoopLedger = `{"run_id": "b367ea43-0475-4434-be16-2c61f30a8a30", "step_id": "fdab7a60-a03d-4e9e-857c-a293e600bd23", "node_id": "llm", "status": "started", "effect": {"type": "llm_call", "payload": {"prompt": "turn:start"}, "result_key": "reply"}, "result": null, "error": null, "started_at": "2026-12-01T06:53:40.157342+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "d9b07a7a7a83bcc371bb7fc1e4df242b", "prev_hash": null, "record_hash": null, "signature": null}
{"run_id": "b367ea43-0475-4434-be16-2c61f30a8a30", "step_id": "a4789deb-98a5-4c44-9114-a192d706b2d5", "node_id": "llm", "status": "started", "effect": {"type": "llm_call", "payload": {"prompt": "turn:start", "params": {"trace_metadata": {"step_id": "a4789deb-98a5-4c44-9114-a192d706b2d5", "effect_idempotency_key": "3907e77a0d0760b072292fac68e7b015", "attempt": 1}}}, "result_key": "reply"}, "result": null, "error": null, "started_at": "2026-12-01T06:53:40.357372+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "3907e77a0d0760b072292fac68e7b015", "prev_hash": null, "record_hash": null, "signature": null}
{"run_id": "b367ea43-0475-4434-be16-2c61f30a8a30", "step_id": "a4789deb-98a5-4c44-9114-a192d706b2d5", "node_id": "llm", "status": "completed", "effect": {"type": "llm_call", "payload": {"prompt": "turn:start", "params": {"trace_metadata": {"step_id": "a4789deb-98a5-4c44-9114-a192d706b2d5", "effect_idempotency_key": "3907e77a0d0760b072292fac68e7b015", "attempt": 1}}}, "result_key": "reply"}, "result": {"content": "ans:turn:start"}, "error": null, "started_at": "2026-12-01T06:53:40.357372+00:00", "ended_at": "2026-12-01T06:53:40.357869+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "3907e77a0d0760b072292fac68e7b015", "prev_hash": null, "record_hash": null, "signature": null}
{"run_id": "b367ea43-0475-4434-be16-2c61f30a8a30", "step_id": "b970e2a0-12f3-4e80-8004-17f8c8083a7e", "node_id": "ask", "status": "started", "effect": {"type": "ask_user", "payload": {"prompt": "more?"}, "result_key": "msg"}, "result": null, "error": null, "started_at": "2026-12-01T06:53:40.359168+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "64390ab1a4be08d6aa454bbb300b237e", "prev_hash": null, "record_hash": null, "signature": null}
{"run_id": "b367ea43-0475-4434-be16-2c61f30a8a30", "step_id": "b970e2a0-12f3-4e80-8004-17f8c8083a7e", "node_id": "ask", "status": "waiting", "effect": {"type": "ask_user", "payload": {"prompt": "more?"}, "result_key": "msg"}, "result": {"wait": {"reason": "user", "wait_key": "user:b367ea43-0475-4434-be16-2c61f30a8a30:ask", "until": null, "resume_to_node": "llm", "result_key": "msg", "prompt": "more?", "choices": null, "allow_free_text": true, "details": null}}, "error": null, "started_at": "2026-12-01T06:53:40.359168+00:00", "ended_at": "2026-12-01T06:53:40.359327+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "64390ab1a4be08d6aa454bbb300b237e", "prev_hash": null, "record_hash": null, "signature": null}
`

// The user answers "hello" through the Go runtime. The run resumes at
// "llm", whose node must now call the model with "turn:hello". Go took the
// effect_in_flight plan left in vars by its own crashed checkpoint two
// owners ago (takeEffectInFlight only checked the node id) and replayed
// the stale "turn:start" call: the user's message was never sent. The plan
// now carries its checkpoint's updated_at and is replayed only from it.
func TestHandoffStaleEffectInFlightNotReplayedAfterPythonContinued(t *testing.T) {
	rt, recorded := pythonDirRuntime(t, handoffLoopRunID, handoffLoopRun, handoffLoopLedger, handoffLoopWorkflow(),
		func(string) string { return "ans" })
	run, err := rt.Resume(t.Context(), runtime.ResumeParams{RunID: handoffLoopRunID,
		WaitKey: "user:" + handoffLoopRunID + ":ask", Payload: map[string]any{"text": "hello"}})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if prompts := *recorded; len(prompts) != 1 || prompts[0] != "turn:hello" {
		t.Fatalf("LLM prompts after the user answered \"hello\": %v; want [turn:hello] "+
			"(a stale vars._runtime.effect_in_flight from an old Go checkpoint was replayed)", prompts)
	}
	if run.Status != durable.RunWaiting || run.CurrentNode != "ask" {
		t.Fatalf("run after resume: status %s at %q; want waiting at ask", run.Status, run.CurrentNode)
	}
}

// handoffFxWorkflow: "a" and "b" each make one LLM_CALL ("one", "two"),
// "done" completes with both results; same ids, nodes and payloads as the
// Python workflow that wrote handoffFxRun.
func handoffFxWorkflow() *runtime.Workflow {
	call := func(prompt, key, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": prompt}, ResultKey: key}, next), nil
		}
	}
	return &runtime.Workflow{ID: "wf_fx", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": call("one", "r1", "b"),
		"b": call("two", "r2", "done"),
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r1": run.Vars["r1"], "r2": run.Vars["r2"]}), nil
		},
	}}
}

// handoffFxRun / handoffFxLedger: Python (JsonFileRunStore, JsonlLedgerStore)
// ticked wf_fx and was killed after appending the COMPLETED record of
// node "a"'s LLM_CALL and before saving the run: the state is still the
// start checkpoint (running at "a"), the ledger is ahead of it. Python's
// own replay finds the completed record by its idempotency key
// (a9e4f6ac...) and reuses it.
const handoffFxRunID = "69aa8c6f-87e2-41e5-beff-f097252d95bd"

const handoffFxRun = `{
  "run_id": "69aa8c6f-87e2-41e5-beff-f097252d95bd",
  "workflow_id": "wf_fx",
  "status": "running",
  "current_node": "a",
  "vars": {
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
    "_runtime": {}
  },
  "waiting": null,
  "output": null,
  "error": null,
  "created_at": "2026-12-01T06:57:24.386132+00:00",
  "updated_at": "2026-12-01T06:57:24.386154+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`

const handoffFxLedger = `{"run_id": "69aa8c6f-87e2-41e5-beff-f097252d95bd", "step_id": "ce781b16-cf91-49a7-be06-34906ffda21d", "node_id": "a", "status": "started", "effect": {"type": "llm_call", "payload": {"prompt": "one", "params": {"trace_metadata": {"step_id": "ce781b16-cf91-49a7-be06-34906ffda21d", "effect_idempotency_key": "a9e4f6ac011c65505cfa7de9a69efcbf", "attempt": 1}}}, "result_key": "r1"}, "result": null, "error": null, "started_at": "2026-12-01T06:57:24.386772+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "a9e4f6ac011c65505cfa7de9a69efcbf", "prev_hash": null, "record_hash": null, "signature": null}
{"run_id": "69aa8c6f-87e2-41e5-beff-f097252d95bd", "step_id": "ce781b16-cf91-49a7-be06-34906ffda21d", "node_id": "a", "status": "completed", "effect": {"type": "llm_call", "payload": {"prompt": "one", "params": {"trace_metadata": {"step_id": "ce781b16-cf91-49a7-be06-34906ffda21d", "effect_idempotency_key": "a9e4f6ac011c65505cfa7de9a69efcbf", "attempt": 1}}}, "result_key": "r1"}, "result": {"content": "ans:one"}, "error": null, "started_at": "2026-12-01T06:57:24.386772+00:00", "ended_at": "2026-12-01T06:57:24.387049+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "a9e4f6ac011c65505cfa7de9a69efcbf", "prev_hash": null, "record_hash": null, "signature": null}
`

// Our keys differ from Python's (they include effect_seq), and on atomic
// stores we did not look at the ledger: a Python run killed between its
// completion record and its save had the effect executed again. A run
// without effect_seq (Python's, not yet stepped by us) is now looked up
// under Python's key too, on every store.
func TestHandoffPythonCompletedRecordAheadOfStateReused(t *testing.T) {
	if got := runtime.PythonIdempotencyKey(handoffFxRunID, "a", &durable.Effect{Type: durable.EffectLLMCall,
		Payload: map[string]any{"prompt": "one"}, ResultKey: "r1"}); got != "a9e4f6ac011c65505cfa7de9a69efcbf" {
		t.Fatalf("PythonIdempotencyKey = %s; want the key Python recorded", got)
	}
	rt, recorded := pythonDirRuntime(t, handoffFxRunID, handoffFxRun, handoffFxLedger, handoffFxWorkflow(),
		func(prompt string) string { return "go:" + prompt })
	run, err := rt.Tick(t.Context(), handoffFxRunID, runtime.TickOptions{})
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("status %s; want completed", run.Status)
	}
	if prompts := *recorded; len(prompts) != 1 || prompts[0] != "two" {
		t.Fatalf("LLM calls made by Go: %v; want only [two] (Python's ledger already holds the completed call \"one\")", prompts)
	}
}

// pythonDirRuntime opens a JSON-file data dir holding one run as Python
// wrote it and a runtime over it whose LLM_CALL handler records each
// prompt and answers reply(prompt).
func pythonDirRuntime(t *testing.T, runID, runJSON, ledger string, wf *runtime.Workflow, reply func(string) string) (*runtime.Runtime, *[]any) {
	t.Helper()
	st := pythonDataDir(t, map[string]string{"run_" + runID + ".json": runJSON, "ledger_" + runID + ".jsonl": ledger})
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	prompts := &[]any{}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			prompt, _ := req.Effect.Payload["prompt"].(string)
			*prompts = append(*prompts, req.Effect.Payload["prompt"])
			return runtime.Completed(map[string]any{"content": reply(prompt)}), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rt, prompts
}

// pythonDataDir writes files (name → content) into a new directory, as
// the Python runtime left them, and opens the JSON store over it.
func pythonDataDir(t *testing.T, files map[string]string) *jsonfile.Store {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
