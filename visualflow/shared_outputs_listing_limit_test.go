package visualflow

import (
	"os"
	"path/filepath"
	"testing"
)

// set_var_property writes its updated object into run vars and records
// the very same object as its output ({"value": obj}). A later set_var on
// a dotted path inside that variable (cfg.b) changes the object in place,
// so the earlier node's recorded output changes too, but only while the
// run stays in memory: restarted between the steps, the output is
// {"a": 1}. A run must continue identically after a restart
// (docs/visualflow.md "Execution state").
func TestSetVarPropertyOutputNotSharedWithVar(t *testing.T) {
	flow := rsFlow("zz_svp_alias", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("svp", "set_var_property", []string{"exec-in:exec", "name:string", "key:string", "value:any"}, []string{"exec-out:exec", "value:object"},
			map[string]any{"pinDefaults": map[string]any{"name": "cfg", "key": "a", "value": 1}}),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "cfg.b", "value": 2}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "v:object"}, nil, nil),
	}, "start.exec-out>svp.exec-in", "svp.exec-out>sv.exec-in", "sv.exec-out>end.exec-in", "svp.value>end.v")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	v, _ := st.Output["v"].(map[string]any)
	if _, leaked := v["b"]; leaked || len(v) != 1 {
		t.Errorf("set_var_property's recorded output changed after the node ran: v = %s, want {\"a\": 1}", jsonText(t, st.Output["v"]))
	}
	compareStraightAndRestarted(t, goldenCase{Flow: flow, Vars: map[string]any{}})
}

// set_var writes a copy of its value into the vars: storing the object it
// records as its output ({"value": obj}) would let a later set_var on a
// dotted path inside that variable (cfg.b) change the earlier node's
// recorded output in place, which a restart between the steps would not.
func TestSetVarOutputNotSharedWithVar(t *testing.T) {
	flow := rsFlow("zz_sv_alias", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("sv1", "set_var", []string{"exec-in:exec", "name:string", "value:object"}, []string{"exec-out:exec", "value:object"},
			map[string]any{"pinDefaults": map[string]any{"name": "cfg", "value": map[string]any{"a": 1}}}),
		rsNode("sv2", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "cfg.b", "value": 2}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "v:object"}, nil, nil),
	}, "start.exec-out>sv1.exec-in", "sv1.exec-out>sv2.exec-in", "sv2.exec-out>end.exec-in", "sv1.value>end.v")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	v, _ := st.Output["v"].(map[string]any)
	if _, leaked := v["b"]; leaked || len(v) != 1 {
		t.Errorf("set_var's recorded output changed after the node ran: v = %s, want {\"a\": 1}", jsonText(t, st.Output["v"]))
	}
	compareStraightAndRestarted(t, goldenCase{Flow: flow, Vars: map[string]any{}})
}

// on_user_request outputs vars.context itself as its context pin (the
// entry node's base input is the vars object, copied only shallowly). An
// add_message (or an llm_call with use_context) appends to vars.context in
// place afterwards, and on_user_request's recorded output changes with
// it, but only in memory: restarted between the steps the pin holds the
// context as it was. on_flow_start was fixed for exactly this (its
// outputs are copies); on_user_request was not.
func TestOnUserRequestContextNotSharedWithVars(t *testing.T) {
	flow := rsFlow("zz_req_alias", "req", []map[string]any{
		rsNode("req", "on_user_request", nil, []string{"exec-out:exec", "message:string", "context:object"}, nil),
		rsNode("am", "add_message", []string{"exec-in:exec", "role:string", "content:string"}, []string{"exec-out:exec", "message:object"},
			map[string]any{"pinDefaults": map[string]any{"role": "user", "content": "later"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "ctx:object"}, nil, nil),
	}, "req.exec-out>am.exec-in", "am.exec-out>end.exec-in", "req.context>end.ctx")
	vars := map[string]any{"message": "hi", "context": map[string]any{"task": "t"}}
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"message": "hi", "context": map[string]any{"task": "t"}})
	ctx, _ := st.Output["ctx"].(map[string]any)
	if _, leaked := ctx["messages"]; leaked {
		t.Errorf("on_user_request's context output changed after the node ran: ctx = %s, want {\"task\": \"t\"}", jsonText(t, st.Output["ctx"]))
	}
	compareStraightAndRestarted(t, goldenCase{Flow: flow, Vars: vars})
}

// list_folder_files must stop at `limit` entries and report truncated
// (spec §6.10). With recursive and include_directories, the entry of every
// folder that is descended into is appended without the limit check (only
// files and non-descended folders check it), so two sub-folders under
// limit=1 give two entries and truncated=false.
func TestListFolderFilesLimitCountsFolders(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	flow := rsFlow("zz_lff", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ls", "list_folder_files", []string{"exec-in:exec", "folder_path:string", "recursive:boolean", "include_directories:boolean", "limit:number"},
			[]string{"exec-out:exec", "entries:array", "truncated:boolean"},
			map[string]any{"pinDefaults": map[string]any{"folder_path": dir, "recursive": true, "include_directories": true, "limit": 1}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "entries:array", "truncated:boolean"}, nil, nil),
	}, "start.exec-out>ls.exec-in", "ls.exec-out>end.exec-in", "ls.entries>end.entries", "ls.truncated>end.truncated")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	entries, _ := st.Output["entries"].([]any)
	if len(entries) > 1 || st.Output["truncated"] != true {
		t.Errorf("limit=1: got %d entries, truncated=%v; want at most 1 entry and truncated=true\n%s",
			len(entries), st.Output["truncated"], jsonText(t, st.Output))
	}
}
