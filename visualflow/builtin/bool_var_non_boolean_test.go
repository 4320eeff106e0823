package builtin

import "testing"

// Spec §6.6 bool_var: value is the variable only when it is a boolean,
// else the configured default; a truthy or falsy non-boolean is not read
// as one. Breaks if the variable's truthiness replaces the default.
func TestBoolVarNonBooleanVariableGivesTheDefault(t *testing.T) {
	lit := obj{"name": "flag", "default": true}
	runNodeCases(t, []nodeCase{
		{name: "zero", typ: "bool_var", vars: obj{"flag": int64(0)}, in: obj{"_literalValue": lit},
			want: obj{"name": "flag", "value": true}},
		{name: "string", typ: "bool_var", vars: obj{"flag": "yes"}, in: obj{"_literalValue": obj{"name": "flag"}},
			want: obj{"name": "flag", "value": false}},
	})
}
