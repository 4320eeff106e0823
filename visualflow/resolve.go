package visualflow

import (
	"maps"
	"slices"

	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/visualflow/builtin"
)

// env returns the builtin environment of a node for this step.
func (s *step) env(n *node) *builtin.Env {
	return &builtin.Env{Vars: s.vars, NodeID: n.ID, NodeType: n.Type, Data: n.Data, Now: s.now, ToolSpec: s.p.opts.ToolSpec}
}

// baseInput is step 2 of §4.2: vars[inputKey], else the bus, else the
// whole vars object. vars[inputKey] is a copy: the node's output record
// may hold parts of its input, and a later dotted set_var writes into
// the vars' objects in place, which would rewrite that record in a
// straight run but not across a restart.
func (s *step) baseInput(n *node) any {
	if n.inputKey != "" {
		return pyval.DeepCopy(s.vars[n.inputKey])
	}
	if v, ok := s.vars["_last_output"]; ok {
		return v
	}
	// A copy without _temp: a node's result is stored under
	// vars._temp.node_outputs, and one that passes its input on (a data-less
	// on_flow_end after on_event) would make the vars hold themselves.
	base := make(map[string]any, len(s.vars))
	for k, v := range s.vars {
		if k != "_temp" {
			base[k] = v
		}
	}
	return pyval.Normalize(base)
}

// busInput is the base input of effect-like nodes: the bus, or {}.
func (s *step) busInput() any {
	if v, ok := s.vars["_last_output"]; ok {
		return v
	}
	return map[string]any{}
}

// isScalarBus reports whether the bus is a value other than an object or
// null. With nothing resolved, the reference hands a non-object bus whole
// to an effect or subflow node's payload builder; a null bus is left to
// the node's defaults here, rather than asking or waiting on "None".
func isScalarBus(bus any) bool {
	_, isObject := bus.(map[string]any)
	return bus != nil && !isObject
}

// resolveInputs is the input resolution of an exec node (§4.3): a
// shallow copy of the base input, then wires, then pin defaults.
func (s *step) resolveInputs(n *node, base any) (map[string]any, error) {
	resolved := map[string]any{}
	if m, ok := base.(map[string]any); ok {
		for k, v := range m {
			resolved[k] = v
		}
	}
	for _, de := range n.dataIn {
		v, ok, err := s.pull(de.src, de.srcPin)
		if err != nil {
			return nil, err
		}
		if ok {
			resolved[de.pin] = v
		}
	}
	for _, k := range slices.Sorted(maps.Keys(n.pinDefaults)) {
		if n.connected[k] {
			continue
		}
		if _, has := resolved[k]; has && !n.declaredIn[k] {
			continue
		}
		resolved[k] = pyval.DeepCopy(n.pinDefaults[k])
	}
	return resolved, nil
}

// first returns the value of the first key present in m.
func first(m map[string]any, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return nil, false
}

// firstNonNull returns the first value that is present and not null.
func firstNonNull(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

// getOr is Python's dict.get(k, def): m[k] when the key is present, even
// as null, else def.
func getOr(m map[string]any, k string, def any) any {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}

// orDefault returns v unless it is nil.
func orDefault(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

// copyObject returns a shallow copy of m (nil → {}).
func copyObject(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}
