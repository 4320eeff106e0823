package visualflow

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// seqFrameFlow is a sequence S whose then:0 is unconnected, then:1 runs A
// and then:2 runs B (both set_var flags).
func seqFrameFlow(first map[string]any) map[string]any {
	return rsFlow("seqframe", "S", []map[string]any{
		rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec", "then:2:exec"}, nil),
		first,
		rsNode("B", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "b_ran", "value": true}}),
	}, "S.then:1>A.exec-in", "S.then:2>B.exec-in")
}

func setFlagNode(id, name string) map[string]any {
	return rsNode(id, "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
		map[string]any{"pinDefaults": map[string]any{"name": name, "value": true}})
}

// A sequence frame saved mid-run resumes with the next branch whichever
// runtime wrote it. The reference's frame["then"] lists every declared
// then:* handle (sorted, connected or not) and idx counts positions in
// it; Go before this fix stored the connected handles only, with idx
// counting those. The scheduler reads the frame's own list, so both
// continue with then:2 after then:1 (control has just returned to S).
func TestSequenceFrame_ResumesSavedFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame map[string]any
	}{
		{"python frame, all declared handles", map[string]any{"kind": "sequence", "idx": int64(2), "then": []any{"then:0", "then:1", "then:2"}}},
		{"older go frame, connected handles", map[string]any{"kind": "sequence", "idx": int64(1), "then": []any{"then:1", "then:2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{"_temp": map[string]any{"_control": map[string]any{
				"stack": []any{"S"}, "return_to": "S", "frames": map[string]any{"S": tc.frame},
			}}}
			_, st := startRunWith(t, seqFrameFlow(setFlagNode("A", "a_ran")), CompileOptions{}, vars)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s, want completed", st.Status)
			}
			if st.Vars["b_ran"] != true || st.Vars["a_ran"] != nil {
				t.Errorf("after resuming at then:2: a_ran=%v b_ran=%v, want only B to run; output=%s",
					st.Vars["a_ran"], st.Vars["b_ran"], jsonText(t, st.Output))
			}
		})
	}
}

// A frame Go writes is the reference's: then = every declared handle
// (unconnected then:0 included), idx = position after the dispatched one,
// so a Python runtime resumes it correctly.
func TestSequenceFrame_WritesDeclaredHandles(t *testing.T) {
	ask := rsNode("A", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
		map[string]any{"pinDefaults": map[string]any{"prompt": "p"}})
	_, st := startRunWith(t, seqFrameFlow(ask), CompileOptions{}, nil)
	if st.Status != durable.RunWaiting {
		t.Fatalf("status %s, want waiting in branch then:1", st.Status)
	}
	frame := st.Vars["_temp"].(map[string]any)["_control"].(map[string]any)["frames"].(map[string]any)["S"]
	want := map[string]any{"kind": "sequence", "idx": int64(2), "then": []any{"then:0", "then:1", "then:2"}}
	if got := jsonText(t, frame); got != jsonText(t, want) {
		t.Errorf("sequence frame = %s, want %s", got, jsonText(t, want))
	}
}

// Declared then:* handles are ordered by number, a non-numeric suffix
// after all numbered ones (the reference's sort key 10**9), and such a
// handle may be wired.
func TestSequence_DeclaredHandleOrder(t *testing.T) {
	flow := rsFlow("seqorder", "S", []map[string]any{
		rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:x:exec", "then:10:exec", "then:2:exec"}, nil),
		setFlagNode("A", "a"), setFlagNode("B", "b"),
	}, "S.then:x>A.exec-in", "S.then:2>B.exec-in")
	g, err := compileGraph(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.program(CompileOptions{}); err != nil {
		t.Fatal(err)
	}
	got := thenHandles(g.nodes["S"])
	if want := []any{"then:2", "then:10", "then:x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("then handles %v, want %v", got, want)
	}
}

// The loop, for and while schedulers resolve their inputs on the bus, or
// on {} before any node wrote it - never on the caller's vars (the
// reference: run.vars.get("_last_output", {}) in compiler.py
// _resolve_items/_resolve_range/_resolve_condition). So unwired pins
// without defaults give no iteration even when the caller passed vars
// named items, start/end or condition.
func TestSchedulers_WithoutBusIgnoreCallerVars(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		ins  []string
		vars map[string]any
	}{
		{"loop", []string{"exec-in:exec", "items:array"}, map[string]any{"items": []any{int64(1), int64(2), int64(3)}}},
		{"for", []string{"exec-in:exec", "start:number", "end:number"}, map[string]any{"start": int64(0), "end": int64(3)}},
		{"while", []string{"exec-in:exec", "condition:boolean"}, map[string]any{"condition": true}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			flow := rsFlow("nobus", "S", []map[string]any{
				rsNode("S", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
					map[string]any{"pinDefaults": map[string]any{"name": "x", "value": int64(1)}}),
				rsNode("L", tc.typ, tc.ins, []string{"loop:exec", "done:exec"}, nil),
				setFlagNode("B", "body_ran"),
			}, "S.exec-out>L.exec-in", "L.loop>B.exec-in")
			_, st := startRunWith(t, flow, CompileOptions{}, tc.vars)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s, want completed", st.Status)
			}
			if _, ran := st.Vars["body_ran"]; ran {
				t.Errorf("%s ran its body on the caller's vars; output=%s", tc.typ, jsonText(t, st.Output))
			}
		})
	}
}
