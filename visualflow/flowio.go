package visualflow

import (
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// dataPins returns the non-exec pins of a list.
func dataPins(pins []pin) []string {
	var out []string
	for _, p := range pins {
		if p.Type != "execution" {
			out = append(out, p.ID)
		}
	}
	return out
}

// flowStart computes the outputs of on_flow_start (§4.10).
func flowStart(n *node, in any) any {
	pins := dataPins(n.Outputs)
	m, ok := in.(map[string]any)
	if !ok {
		name := "input"
		if len(pins) == 1 {
			name = pins[0]
		}
		return map[string]any{name: in}
	}
	// Copies: the output is kept as the node's output and on the bus,
	// while nodes after it change vars in place (set_var on a dotted
	// path, add_message); shared, the output would change with them, but
	// only until the run is saved and read back.
	out := map[string]any{}
	if len(pins) > 0 {
		for _, p := range pins {
			out[p] = pyval.DeepCopy(m[p]) // resolved = vars, then pinDefaults for absent names
		}
		return out
	}
	for k, v := range m {
		if !strings.HasPrefix(k, "_") {
			out[k] = pyval.DeepCopy(v)
		}
	}
	return out
}

// flowEnd is the result of on_flow_end (§4.10): the declared data pins'
// values, or a copy of the input without pins, as the reference's
// _create_flow_end_handler returns it. success is not added here: the node
// output, the bus and outputKey keep this shape, and only the run output
// gets success (completeResult, the reference's setdefault), so a declared
// success pin still wins there, even when null.
func flowEnd(n *node, in map[string]any) map[string]any {
	pins := dataPins(n.Inputs)
	if len(pins) == 0 {
		return copyObject(in)
	}
	out := make(map[string]any, len(pins))
	for _, p := range pins {
		out[p] = in[p]
	}
	return out
}

// flowEndNonObject is on_flow_end on a non-object input (the bus when no
// pin resolved), as the reference's _create_flow_end_handler maps it: the
// single declared pin receives the value, several pins put it under
// "response", and without pins the value is the result itself (the
// terminal rule then makes it {response, success}).
func flowEndNonObject(n *node, in any) any {
	pins := dataPins(n.Inputs)
	switch len(pins) {
	case 0:
		return in
	case 1:
		return map[string]any{pins[0]: in}
	}
	return map[string]any{"response": in}
}

// switchNode evaluates a switch (§6.2).
func switchNode(n *node, in map[string]any) map[string]any {
	value := in["value"]
	s := ""
	if value != nil {
		s = pyval.Str(value)
	}
	cfg, _ := n.Data["switchConfig"].(map[string]any)
	cases, _ := cfg["cases"].([]any)
	for _, raw := range cases {
		c, _ := raw.(map[string]any)
		id, _ := c["id"].(string) // a case id that is not a string is skipped, as in the reference
		cv, has := c["value"]
		if id == "" || !has || cv == nil {
			continue
		}
		if m := pyval.Str(cv); m == s {
			// matched is the case value as text (str(case_value) in the
			// reference), the string the comparison used.
			return map[string]any{"branch": "case:" + id, "value": value, "matched": m}
		}
	}
	return map[string]any{"branch": "default", "value": value}
}
