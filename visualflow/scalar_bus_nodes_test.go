package visualflow

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// VisualFlow node types behave as the Python reference does on a scalar
// bus and other edge inputs. The expected values are what the Python
// reference (AbstractRuntime visualflow_compiler) produces for the same
// flow.

// scalarBusFlow is start → code (returns the Python literal ret, which
// becomes the bus) → the node given (id "n"), plus the extra nodes/edges.
func scalarBusFlow(ret, node, extraNodes, extraEdges string) string {
	return `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "code", "type": "code", "data": {"codeBody": "return ` + ret + `",
	      "inputs": [{"id": "exec-in", "type": "execution"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	    ` + node + extraNodes + `
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	    {"source": "code", "sourceHandle": "exec-out", "target": "n", "targetHandle": "exec-in"}` + extraEdges + `
	  ]}`
}

// on_flow_end reached with a scalar on the bus and none of its pins
// resolved. The reference calls the node's function on the base input
// when nothing resolved (visual/executor.py _create_data_aware_handler:
// `base_handler(resolved_input if resolved_input else input_data)`, spec
// §4.2 step 4), and _create_flow_end_handler maps a non-object input:
// one declared pin → {pin: input}; several → {"response": input}; none →
// the value itself, which the terminal rule turns into {response, success}
// (compiler.py _to_complete_output). Ours read the pins from a nil map:
// the code node's result was lost and the run output held nulls.
// (The same gap was fixed for if/switch/loop/while/concat/make_array and
// on_flow_start — nonobject_input_test.go — but not for on_flow_end.)
func TestFlowEndScalarBus(t *testing.T) {
	cases := []struct {
		name, pins string
		want       map[string]any
	}{
		{"one pin", `, {"id": "result", "type": "any"}`, map[string]any{"result": "hello", "success": true}},
		{"two pins", `, {"id": "a", "type": "any"}, {"id": "b", "type": "any"}`, map[string]any{"response": "hello", "success": true}},
		{"no pins", ``, map[string]any{"response": "hello", "success": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := runFlowOnce(t, scalarBusFlow("'hello'",
				`{"id": "n", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}`+tc.pins+`]}}`, ``, ``), map[string]any{})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			if got, want := jsonText(t, st.Output), jsonText(t, tc.want); got != want {
				t.Fatalf("on_flow_end after a node returning 'hello': output = %s, want %s", got, want)
			}
		})
	}
}

// Effect nodes reached with a scalar on the bus and nothing resolved: the
// reference passes the bus itself to the payload builder (same
// _create_data_aware_handler rule; the effect wrapper in compiler.py calls
// it with run.vars["_last_output"]) and the builders take a non-object
// input whole: ask_user `prompt = str(input)`, answer_user
// `message = str(input)`, wait_event `event_key = str(input)`
// (visual/executor.py _create_ask_user_handler, _create_answer_user_handler,
// _create_wait_event_handler). Ours built them from an empty map: the
// user was asked "Please respond:", shown "", and the wait used the key
// "default".
func TestEffectNodesScalarBus(t *testing.T) {
	t.Run("ask_user prompt", func(t *testing.T) {
		st := runFlowOnce(t, scalarBusFlow("'Your name?'", `{"id": "n", "type": "ask_user", "data": {
		  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "prompt", "type": "string"}, {"id": "choices", "type": "array"}],
		  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "response", "type": "string"}]}}`, ``, ``), map[string]any{})
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
		}
		if st.Waiting.Prompt != "Your name?" {
			t.Fatalf("ask_user prompt = %q, want the bus value %q", st.Waiting.Prompt, "Your name?")
		}
	})
	t.Run("wait_event key", func(t *testing.T) {
		st := runFlowOnce(t, scalarBusFlow("'evt:session:s1:go'", `{"id": "n", "type": "wait_event", "data": {
		  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "event_key", "type": "string"}],
		  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "event_data", "type": "any"}]}}`, ``, ``), map[string]any{})
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
		}
		if st.Waiting.WaitKey != "evt:session:s1:go" {
			t.Fatalf("wait_event key = %q, want the bus value %q", st.Waiting.WaitKey, "evt:session:s1:go")
		}
	})
	t.Run("answer_user message", func(t *testing.T) {
		st := runFlowOnce(t, scalarBusFlow("'Done!'", `{"id": "n", "type": "answer_user", "data": {
		  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "message", "type": "string"}],
		  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "message", "type": "string"}]}}`, ``, ``), map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("status %s (%s)", st.Status, st.Error)
		}
		res, _ := st.Output["result"].(map[string]any)
		if res["message"] != "Done!" {
			t.Fatalf("answer_user outcome = %s, want message %q (the bus value)", jsonText(t, st.Output), "Done!")
		}
	})
}

// subflow reached with a scalar on the bus and nothing resolved: the
// reference's _create_subflow_effect_builder receives the bus itself and
// makes the child vars {<the single forwarded pin>: input} (or
// {"input": input} otherwise). Ours started the child with empty vars.
func TestSubflowScalarBus(t *testing.T) {
	parent := scalarBusFlow("'hello'", `{"id": "n", "type": "subflow", "data": {"subflowId": "child",
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "prompt", "type": "string"}],
	  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}}`, ``, ``)
	p, _ := subflowCall(t, parent, map[string]any{})
	vars, _ := p["vars"].(map[string]any)
	if vars["prompt"] != "hello" {
		t.Fatalf("child vars = %s, want {prompt: \"hello\"} (the bus value in the single forwarded pin)", jsonText(t, p["vars"]))
	}
}

// wait_event with its allow_free_text pin resolved to null (a wire from
// an unset variable): the reference reads
// `aft = input.get("allow_free_text")`, falls back to allowFreeText when
// that is None, and keeps the default True when both are None
// (visual/executor.py _create_wait_event_handler; spec §6.1 "default
// true"). Ours took the null as present and made it false, so the host
// refused free-text answers.
func TestWaitEventNullAllowFreeText(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "aft", "type": "any"}]}},
	    {"id": "w", "type": "wait_event", "data": {"pinDefaults": {"event_key": "k"},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "event_key", "type": "string"}, {"id": "allow_free_text", "type": "boolean"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "event_data", "type": "any"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "w", "targetHandle": "exec-in"},
	    {"source": "start", "sourceHandle": "aft", "target": "w", "targetHandle": "allow_free_text"}
	  ]}`, map[string]any{"aft": nil})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
	}
	if !st.Waiting.AllowFreeText {
		t.Fatalf("wait_event with allow_free_text=null: AllowFreeText = false, want the default true")
	}
}

// wait_until in timestamp mode with no duration: the reference builds
// `until = str(duration or "")` with duration defaulting to 0, i.e. ""
// (visual/executor.py _create_wait_until_handler), which the kernel
// reports as a missing until (docs/compatibility.md: "wait_until requires
// payload.until (ISO timestamp)" when blank). Ours wrote str(None) and
// the run failed with `invalid ISO timestamp "None"`, naming a value the
// author never gave.
func TestWaitUntilTimestampWithoutDuration(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "w", "type": "wait_until", "data": {"effectConfig": {"durationType": "timestamp"},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "duration", "type": "string"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}]}}
	  ],
	  "edges": [{"source": "start", "sourceHandle": "exec-out", "target": "w", "targetHandle": "exec-in"}]}`, map[string]any{})
	if st.Status != durable.RunFailed {
		t.Fatalf("status %s, want failed", st.Status)
	}
	if strings.Contains(st.Error, `"None"`) || !strings.Contains(st.Error, "requires payload.until") {
		t.Fatalf("error = %q, want the blank-until error (\"wait_until requires payload.until ...\"), not a parse error on \"None\"", st.Error)
	}
}

// for with a NaN step (a "nan" string reads as a float): the reference's
// termination test is `(cur >= end) if step > 0 else (cur <= end)`
// (control_adapter.py create_for_node_handler), so a NaN step takes the
// `<=` branch and 0 <= 3 ends the loop at once; the frame holding the NaN
// is dropped in the same step and the run completes. Ours tested
// `step > 0` and `step < 0` separately, neither held, the body ran with
// i = NaN and the run failed on the NaN in its vars.
func TestForNaNStepEndsAtOnce(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": 0, "end": 3, "step": "nan"},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "start", "type": "number"}, {"id": "end", "type": "number"}, {"id": "step", "type": "number"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "i", "type": "number"}, {"id": "index", "type": "number"}]}}`, "i"), map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("for with step \"nan\": status %s (%s), output %s; want completed through done with no iteration", st.Status, st.Error, jsonText(t, st.Output))
	}
	if st.Output["last"] != nil {
		t.Fatalf("for with step \"nan\": output.last = %v, want null (no iteration)", st.Output["last"])
	}
}

// switch whose case id is not a string: the reference skips the case
// (`if not isinstance(case_id, str) or not case_id: continue`,
// visual/executor.py _create_switch_handler), so the value goes to
// `default`. Ours turned the id into "1" and routed to case:1.
func TestSwitchNonStringCaseIDSkipped(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "v", "type": "any"}]}},
	    {"id": "sw", "type": "switch", "data": {"switchConfig": {"cases": [{"id": 1, "value": "b"}]},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "value", "type": "any"}],
	      "outputs": [{"id": "default", "type": "execution"}, {"id": "case:1", "type": "execution"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "sw", "targetHandle": "exec-in"},
	    {"source": "start", "sourceHandle": "v", "target": "sw", "targetHandle": "value"}
	  ]}`, map[string]any{"v": "b"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["branch"] != "default" {
		t.Fatalf("switch with case id 1 (a number): branch = %v, want \"default\"; output=%s", st.Output["branch"], jsonText(t, st.Output))
	}
}

// concat as an exec node whose input is a falsy non-object (0, false,
// []): the reference returns `str(input_data or "")`, i.e. ""
// (visual/executor.py _create_concat_handler); docs/visualflow.md: where
// the spec's summary and the code differ on an edge, the code wins. Ours
// returned str(input): "0", "False", "[]".
func TestConcatFalsyNonObjectInput(t *testing.T) {
	for _, v := range []any{int64(0), false, []any{}} {
		st := runFlowOnce(t, concatExecFlow,
			map[string]any{"msg": v})
		if st.Status != durable.RunCompleted {
			t.Fatalf("status %s (%s)", st.Status, st.Error)
		}
		if st.Output["response"] != "" {
			t.Fatalf("concat of %#v: response = %q, want \"\" (str(input or \"\"))", v, st.Output["response"])
		}
	}
}

// diamondFlow is start → end, with end's pin wired from a chain of
// `depth` add nodes, each taking both of its pins from the previous one.
func diamondFlow(depth int) map[string]any {
	nodes := []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("p0", "add", []string{"a:number", "b:number"}, []string{"result:number"},
			map[string]any{"pinDefaults": map[string]any{"a": 1, "b": 1}}),
	}
	edges := []string{"start.exec-out>end.exec-in"}
	for i := 1; i <= depth; i++ {
		nodes = append(nodes, rsNode(fmt.Sprintf("p%d", i), "add", []string{"a:number", "b:number"}, []string{"result:number"}, nil))
		edges = append(edges, fmt.Sprintf("p%d.result>p%d.a", i-1, i), fmt.Sprintf("p%d.result>p%d.b", i-1, i))
	}
	nodes = append(nodes, rsNode("end", "on_flow_end", []string{"exec-in:exec", "sum:number"}, nil, nil))
	edges = append(edges, fmt.Sprintf("p%d.result>end.sum", depth))
	return rsFlow("diamond", "start", nodes, edges...)
}

// Pure nodes are re-evaluated on every pull (Q10), so a chain of n nodes
// each wired twice to the previous one costs 2^n evaluations inside one
// step: 18 add nodes take about a second, 40 would take weeks. Nothing
// bounded or interrupted it: evaluate never looked at the step's context,
// so neither a tick deadline nor Stop/cancel (docs/compatibility.md:
// Stop cancels the context of the tick in flight) ended the step; the run
// lock stayed held and a worker was lost to one small authored flow (the
// code node, by contrast, has a step budget and a wall-clock limit).
// The spec allows memoising deterministic pure nodes per pull tree
// (§4.5, random nodes kept uncached), and a context check per
// evaluation would let a cancel through. Here the tick's context expires
// after 50 ms; the tick should return soon after (2 s leaves room for a
// loaded machine under -race), not when the 2^20 evaluations are done
// (seconds without -race).
func TestPureDiamondHonoursTickContext(t *testing.T) {
	wf, err := Compile(diamondFlow(20), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, memory.New(), nil, wf)
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, _ = rt.Tick(ctx, id, runtime.TickOptions{})
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("tick with a 50ms deadline returned after %v: the pure evaluation (2^20 pulls of 21 add nodes) ignores the context", d)
	}
}

// if reached with a scalar on the bus and nothing resolved: the reference
// reports `condition = bool(input)` for a non-object input
// (visual/executor.py _create_if_handler), so after a node returning
// 'yes' the if's record (the bus, and the run output when the chosen
// branch is unconnected) holds condition: true. Ours kept the raw value
// "yes" (the branch itself was fixed in TestIfConditionFromScalarBus).
func TestIfScalarBusConditionIsBool(t *testing.T) {
	st := runFlowOnce(t, scalarBusFlow("'yes'", `{"id": "n", "type": "if", "data": {
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	  "outputs": [{"id": "true", "type": "execution"}, {"id": "false", "type": "execution"}]}}`, ``, ``), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["branch"] != "true" || st.Output["condition"] != true {
		t.Fatalf("if on the scalar bus 'yes': output = %s, want branch \"true\" and condition true (bool(input))", jsonText(t, st.Output))
	}
}

// listen_voice settings come from "pins ▸ config" (spec §6.11: "Settings
// use pins ▸ config with the aliases listed": the first pin alias with a
// value other than null/"" wins, else the first effectConfig alias with
// such a value, else the default; reference: visual/executor.py
// _create_listen_voice_handler, `_input_or_config(payload, config,
// "wait_key", "event_key", default="voice_input")` and the same for
// prompt, language, stt_provider|sttProvider|provider_voice, stt_model|
// sttModel|model_voice, max_duration_s|maxDurationS). Ours read pins
// only, without the aliases, and took an empty wait_key pin as the key:
// a node configured in the editor (effectConfig) waited on the shared
// default key "voice_input" with the default prompt, and an empty pin
// made the wait key "".
func TestListenVoicePinsThenConfig(t *testing.T) {
	flow := func(defaults string) string {
		return `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "v", "type": "listen_voice", "data": {"pinDefaults": {` + defaults + `},
	      "effectConfig": {"wait_key": "mic:kitchen", "prompt": "Say the word", "sttProvider": "whisper"},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "prompt", "type": "string"}, {"id": "wait_key", "type": "string"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "audio_artifact", "type": "artifact_audio"}]}}
	  ],
	  "edges": [{"source": "start", "sourceHandle": "exec-out", "target": "v", "targetHandle": "exec-in"}]}`
	}
	for _, tc := range []struct{ name, defaults string }{
		{"no pins", ``},
		{"empty pins", `"wait_key": "", "prompt": ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := runFlowOnce(t, flow(tc.defaults), map[string]any{})
			if st.Status != durable.RunWaiting || st.Waiting == nil {
				t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
			}
			if st.Waiting.WaitKey != "mic:kitchen" || st.Waiting.Prompt != "Say the word" {
				t.Fatalf("listen_voice waits on key %q with prompt %q, want the effectConfig values %q / %q",
					st.Waiting.WaitKey, st.Waiting.Prompt, "mic:kitchen", "Say the word")
			}
			if st.Waiting.Details["provider"] != "whisper" {
				t.Fatalf("listen_voice details = %s, want provider \"whisper\" (effectConfig.sttProvider)", jsonText(t, st.Waiting.Details))
			}
		})
	}
}
