package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A JSON-pointer segment is unescaped ~1 first, then ~0, as Python's
// parse_vars_path does (part.replace("~1", "/").replace("~0", "~")): "~01"
// is the key "~1", not "/". The other order would read the sibling "a/".
func TestVarsQueryPointerUnescapesTildeOneFirst(t *testing.T) {
	f := memSetup(t, false)
	vars := map[string]any{"scratchpad": map[string]any{"a~1": "tilde-one", "a/": "slash"}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectVarsQuery, map[string]any{"path": "/scratchpad/a~01"}),
	)
	mustComplete(t, run)
	want := "{\n  \"path\": \"/scratchpad/a~01\",\n  \"type\": \"str\",\n  \"value\": \"tilde-one\"\n}"
	if r := res(t, run, 0); r["success"] != true || r["output"] != want {
		t.Errorf("result %v; want output %q", r, want)
	}
}
