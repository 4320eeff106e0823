package builtin

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// compareNode: a <op> b with Python equality/ordering; incomparable
// operands order as false.
func compareNode(_ *Env, inputs map[string]any) (any, error) {
	a, b := inputs["a"], inputs["b"]
	op := pyval.Str(get(inputs, "op", "=="))
	switch op {
	case "==":
		return pyval.Equal(a, b), nil
	case "!=":
		return !pyval.Equal(a, b), nil
	}
	c, ok := pyval.Compare(a, b)
	switch op {
	case "<":
		return ok && c < 0, nil
	case "<=":
		return ok && c <= 0, nil
	case ">":
		return ok && c > 0, nil
	case ">=":
		return ok && c >= 0, nil
	}
	return nil, fmt.Errorf("Unknown comparison operator: %s", op)
}

// notNode: not truthy(value); a missing value counts as false.
func notNode(_ *Env, inputs map[string]any) (any, error) {
	return !pyval.Truthy(get(inputs, "value", false)), nil
}

func andNode(_ *Env, inputs map[string]any) (any, error) {
	return pyval.Truthy(inputs["a"]) && pyval.Truthy(inputs["b"]), nil
}

func orNode(_ *Env, inputs map[string]any) (any, error) {
	return pyval.Truthy(inputs["a"]) || pyval.Truthy(inputs["b"]), nil
}

// coalesceNode returns the first present, non-null input in pin order
// (["a", "b"] without pin metadata).
func coalesceNode(env *Env, inputs map[string]any) (any, error) {
	order := pinOrder(env, inputs)
	if len(order) == 0 {
		order = []string{"a", "b"}
	}
	for _, pin := range order {
		if v, ok := inputs[pin]; ok && v != nil {
			return v, nil
		}
	}
	return nil, nil
}
