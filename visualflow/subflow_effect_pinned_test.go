package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// inheritSubflowPayload runs a subflow node with inherit_context on, the
// child's context given on its vars pin and the parent's in the run vars,
// and returns the child vars of the start_subworkflow payload.
func inheritSubflowPayload(t *testing.T, parentCtx, childCtx map[string]any) map[string]any {
	t.Helper()
	sub := rsNode("sub", "subflow", []string{"exec-in:exec", "vars:object", "inherit_context:boolean"}, []string{"exec-out:exec", "output:any"},
		map[string]any{"subflowId": "child", "pinDefaults": map[string]any{"inherit_context": true, "vars": map[string]any{"context": childCtx}}})
	flow := rsFlow("inherit", "start", []map[string]any{rvStart(), sub, rvEnd("end", nil, nil)},
		"start.exec-out>sub.exec-in", "sub.exec-out>end.exec-in")
	sc := &scripted{results: []any{map[string]any{"output": nil}}}
	startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sc.handler()},
		map[string]any{"context": parentCtx})
	if len(sc.payloads) == 0 {
		t.Fatal("no start_subworkflow effect")
	}
	vars, _ := sc.payloads[0]["vars"].(map[string]any)
	return vars
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// TestInheritContextMessageOrder pins the §5.5 merge order: child
// system messages, parent system messages, parent others, child others.
func TestInheritContextMessageOrder(t *testing.T) {
	t.Parallel()
	vars := inheritSubflowPayload(t,
		map[string]any{"messages": []any{msg("system", "psys"), msg("user", "puser")}},
		map[string]any{"messages": []any{msg("user", "cuser"), msg("system", "csys")}})
	var got []any
	for _, m := range vars["context"].(map[string]any)["messages"].([]any) {
		got = append(got, m.(map[string]any)["content"])
	}
	if jsonText(t, got) != jsonText(t, []any{"csys", "psys", "puser", "cuser"}) {
		t.Fatalf("merged messages = %s, want csys, psys, puser, cuser", jsonText(t, got))
	}
}

// TestInheritContextKeepsChildAttachments pins §5.5: the parent's
// attachments are copied only when the child context has none.
func TestInheritContextKeepsChildAttachments(t *testing.T) {
	t.Parallel()
	child := []any{map[string]any{"$artifact": "child-att"}}
	vars := inheritSubflowPayload(t,
		map[string]any{"messages": []any{msg("user", "p")}, "attachments": []any{map[string]any{"$artifact": "parent-att"}}},
		map[string]any{"messages": []any{}, "attachments": child})
	if got := jsonText(t, vars["context"].(map[string]any)["attachments"]); got != jsonText(t, child) {
		t.Fatalf("child attachments = %s, want the child's own %s", got, jsonText(t, child))
	}
}

// TestSubflowVarsPinIsTheChildVars pins §5.5: an object on a declared
// vars pin is the base of the child's vars, not nested under "vars".
func TestSubflowVarsPinIsTheChildVars(t *testing.T) {
	t.Parallel()
	sub := rsNode("sub", "subflow", []string{"exec-in:exec", "vars:object", "extra:string"}, []string{"exec-out:exec", "output:any"},
		map[string]any{"subflowId": "child", "pinDefaults": map[string]any{"vars": map[string]any{"a": int64(1)}, "extra": "e"}})
	flow := rsFlow("subvars", "start", []map[string]any{rvStart(), sub, rvEnd("end", nil, nil)},
		"start.exec-out>sub.exec-in", "sub.exec-out>end.exec-in")
	sc := &scripted{results: []any{map[string]any{"output": nil}}}
	startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sc.handler()}, map[string]any{})
	if len(sc.payloads) == 0 {
		t.Fatal("no start_subworkflow effect")
	}
	if got := jsonText(t, sc.payloads[0]["vars"]); got != jsonText(t, map[string]any{"a": 1, "extra": "e"}) {
		t.Fatalf("child vars = %s, want {a: 1, extra: e}", got)
	}
}

// TestSubflowScalarOutputFillsItsSingleExtraPin pins §5.5: a child
// output that is not an object is read by the subflow node's single
// declared output pin besides output/sub_run_id/child_output.
func TestSubflowScalarOutputFillsItsSingleExtraPin(t *testing.T) {
	t.Parallel()
	sub := rsNode("sub", "subflow", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any", "answer:string"},
		map[string]any{"subflowId": "child"})
	flow := rsFlow("subout", "start", []map[string]any{rvStart(), sub, rvEnd("end", []string{"answer"}, nil)},
		"start.exec-out>sub.exec-in", "sub.exec-out>end.exec-in", "sub.answer>end.answer")
	sc := &scripted{results: []any{map[string]any{"sub_run_id": "c1", "output": "hello"}}}
	_, st := startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sc.handler()}, map[string]any{})
	if st.Output["answer"] != "hello" {
		t.Fatalf("output %s, want answer=hello", jsonText(t, st.Output))
	}
}
