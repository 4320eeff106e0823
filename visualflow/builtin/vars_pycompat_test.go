package builtin

import "testing"

// var_decl and get_var resolve values as the Python reference does; each
// test quotes the reference rule it checks.

// var_decl with type "any": the reference returns the looked-up var
// whenever it "matches" the type, and for "any" a missing var (None)
// matches, so the configured default is NOT used (executor.py
// _create_var_decl_handler: `raw = _get_by_path(...); if _matches(raw):
// return raw`). Ours fell back to the default.
func TestVarDeclAnyMissingVarIgnoresDefault(t *testing.T) {
	fn, _ := Lookup("var_decl")
	env := &Env{Vars: map[string]any{"other": int64(1)},
		Data: map[string]any{"literalValue": map[string]any{"name": "missing", "type": "any", "default": "fallback"}}}
	got, err := fn(env, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.(map[string]any)["value"]; v != nil {
		t.Fatalf("var_decl(any) of a missing var = %#v, want null (reference returns the missing var, not the default)", v)
	}
}

// get_var has no literalValue configuration (spec §6.6: name comes from
// the `name` input; empty name → null; the reference get_var is not a
// builtin and never sees _literalValue). Ours fell back to a string
// data.literalValue as the variable name.
func TestGetVarIgnoresLiteralValue(t *testing.T) {
	fn, _ := Lookup("get_var")
	env := &Env{Vars: map[string]any{"secret": "s3"}, Data: map[string]any{"literalValue": "secret"}}
	got, err := fn(env, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.(map[string]any)["value"]; v != nil {
		t.Fatalf("get_var without a name input = %#v, want null (empty name)", v)
	}
}
