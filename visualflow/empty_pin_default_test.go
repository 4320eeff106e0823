package visualflow

import "testing"

// A pinDefaults entry with an empty key is dropped at load, as the
// reference's visual_to_flow._normalize_pin_defaults drops it (`if not
// isinstance(k, str) or not k: continue`): kept, it would reach the node's
// inputs, and an on_flow_end without pins (which forwards all its inputs)
// would end the run with a "" key.
func TestEmptyPinDefaultKeyIsDropped(t *testing.T) {
	flow := rsFlow("vf_rv_empty_default_key", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil,
			map[string]any{"pinDefaults": map[string]any{"": "junk", "keep": "k"}}),
	}, "start.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if _, has := st.Output[""]; has {
		t.Errorf("run output %s: the reference drops the pinDefaults entry with an empty key", jsonText(t, st.Output))
	}
	if st.Output["keep"] != "k" {
		t.Errorf("run output %s: want keep=k from pinDefaults", jsonText(t, st.Output))
	}
}

// Same reference rule, where it changes what the handler receives: with
// only the ""-keyed default, the reference's resolved input is empty, so
// the node is called with the base input (`base_handler(resolved_input if
// resolved_input else input_data)`); a one-pin on_flow_end after a code
// node that returned a string puts that string in its pin (resolving
// {"": ...} would leave it null).
func TestEmptyPinDefaultKeyKeepsScalarBus(t *testing.T) {
	flow := rsFlow("vf_rv_empty_default_key_bus", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("code", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"code": "def transform(_input):\n    return \"hello\"\n", "functionName": "transform"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "answer:string"}, nil,
			map[string]any{"pinDefaults": map[string]any{"": "junk"}}),
	}, "start.exec-out>code.exec-in", "code.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Output["answer"] != "hello" {
		t.Errorf("run output %s: want answer=hello (the scalar bus, as with no pinDefaults)", jsonText(t, st.Output))
	}
}
