package builtin

import "github.com/abstractframework/abstractgateway/internal/pyval"

// literalValue implements every literal node type: {"value": literalValue}
// verbatim (no coercion; missing → null).
func literalValue(env *Env, inputs map[string]any) (any, error) {
	v, _ := literalInput(env, inputs)
	return map[string]any{"value": pyval.DeepCopy(v)}, nil
}
