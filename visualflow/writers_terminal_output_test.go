package visualflow

import (
	"maps"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// terminalWriterFlow is on_flow_start(prompt) → w, where w has no outgoing
// exec edge and no control block is active, so w's own completion output
// is the run's output.
func terminalWriterFlow(w map[string]any) map[string]any {
	return rsFlow("flowout", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "prompt:string"}, nil), w,
	}, "start.exec-out>w.exec-in")
}

// A flow ending at a variable writer completes with the reference's
// terminal output (variable_adapter.py), which carries the untouched bus
// under "result" — not the writer's persisted record + success: set_var
// has no "value", set_vars and set_var_property add "result".
func TestTerminalVarWriterRunOutput(t *testing.T) {
	bus := map[string]any{"prompt": "hello"}
	for _, tc := range []struct {
		name string
		node map[string]any
		want map[string]any
	}{
		{"set_var",
			rsNode("w", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
				map[string]any{"pinDefaults": map[string]any{"name": "x", "value": int64(1)}}),
			map[string]any{"success": true, "result": bus}},
		{"set_var_property",
			rsNode("w", "set_var_property", []string{"exec-in:exec", "name:string", "key:string", "value:any"}, []string{"exec-out:exec", "value:object"},
				map[string]any{"pinDefaults": map[string]any{"name": "x", "key": "k", "value": int64(1)}}),
			map[string]any{"success": true, "value": map[string]any{"k": int64(1)}, "result": bus}},
		{"set_vars",
			rsNode("w", "set_vars", []string{"exec-in:exec", "updates:object"}, []string{"exec-out:exec", "updates:object"},
				map[string]any{"pinDefaults": map[string]any{"updates": map[string]any{"x": int64(1)}}}),
			map[string]any{"success": true, "updates": map[string]any{"x": int64(1)}, "result": bus}},
		{"set_vars no-op",
			rsNode("w", "set_vars", []string{"exec-in:exec", "updates:object"}, []string{"exec-out:exec", "updates:object"}, nil),
			map[string]any{"success": true, "updates": map[string]any{}, "result": bus}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, st := startRunWith(t, terminalWriterFlow(tc.node), CompileOptions{}, map[string]any{"prompt": "hello"})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s), want completed", st.Status, st.Error)
			}
			if got, want := jsonText(t, st.Output), jsonText(t, tc.want); got != want {
				t.Errorf("run output = %s, want %s", got, want)
			}
		})
	}
}

// A flow ending at add_message completes with {success, message} only
// (context_adapter.py): the record's context/task/messages, a copy of the
// whole conversation, stay out of the run output.
func TestTerminalAddMessageRunOutput(t *testing.T) {
	w := rsNode("w", "add_message", []string{"exec-in:exec", "role:string", "content:string"}, []string{"exec-out:exec", "message:object"},
		map[string]any{"pinDefaults": map[string]any{"role": "user", "content": "hi"}})
	_, st := startRunWith(t, terminalWriterFlow(w), CompileOptions{}, map[string]any{"prompt": "hello"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s), want completed", st.Status, st.Error)
	}
	if keys, want := slices.Sorted(maps.Keys(st.Output)), []string{"message", "success"}; !slices.Equal(keys, want) {
		t.Errorf("run output keys = %v, want %v; output = %s", keys, want, jsonText(t, st.Output))
	}
	if m, _ := st.Output["message"].(map[string]any); m == nil || m["content"] != "hi" {
		t.Errorf("output.message = %s, want the appended message", jsonText(t, st.Output["message"]))
	}
}

// A flow ending at memact_compose completes with the node's record as-is
// (memact_adapter.py): no "success" is added to a record reporting
// ok=false, and a missing kg_result gets the reference's error text.
func TestTerminalMemactRunOutput(t *testing.T) {
	w := rsNode("w", "memact_compose", []string{"exec-in:exec", "kg_result:object", "stimulus:string", "marker:string", "max_items:number"},
		[]string{"exec-out:exec", "ok:boolean", "delta:object", "trace:object", "active_memory:object", "memact_blocks:array", "memact_system_prompt:string"}, nil)
	_, st := startRunWith(t, terminalWriterFlow(w), CompileOptions{}, map[string]any{"prompt": "hello"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s), want completed", st.Status, st.Error)
	}
	if v, has := st.Output["success"]; has {
		t.Errorf("run output has success=%v, want the record alone: %s", v, jsonText(t, st.Output))
	}
	if want := "memact_compose requires a dict kg_result (connect memory_kg_query.raw or output)"; st.Output["error"] != want {
		t.Errorf("error = %q, want %q", st.Output["error"], want)
	}
}

// §4.4: memact_compose writes its record to the bus, so a data-less
// on_flow_end after it ends the run with that record.
func TestMemactComposeWritesTheBus(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("mc", "memact_compose", []string{"exec-in:exec", "kg_result:object"}, []string{"exec-out:exec", "ok:boolean"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>mc.exec-in", "mc.exec-out>end.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["ok"] != false || st.Output["error"] == nil {
		t.Fatalf("output = %s, want memact_compose's record (ok:false, error) from the bus", jsonText(t, st.Output))
	}
}
