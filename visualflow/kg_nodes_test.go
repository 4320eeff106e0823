package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// KG Assert → KG Query → KG Resolve against host handlers (the runtime
// has none built in, runtime-model §3.10). Spec §6.8 payloads and §5.3
// mappings (compiler.py _sync_effect_results_to_node_outputs): assert's
// payload takes `triples` when `assertions` is absent and wraps a single
// object; its pins are assertion_ids/count/ok. The query payload sends
// max_in_tokens as int(float()) max_input_tokens; its pins copy
// packets/active_memory_text/packed_count only when the outcome has them,
// and its outputKey receives `items`. Resolve sends maxCandidates as
// max_candidates and maps candidates/count/ok/warnings.
func TestKGNodesEndToEnd(t *testing.T) {
	t.Parallel()
	flow := rsFlow("kg", "start", []map[string]any{
		startNode(),
		rsNode("a", "memory_kg_assert", []string{"exec-in:exec", "triples:any", "scope:string"}, []string{"exec-out:exec", "assertion_ids:array", "count:number", "ok:boolean"},
			map[string]any{"pinDefaults": map[string]any{"triples": map[string]any{"subject": "ex:ada", "predicate": "rdf:type", "object": "ex:Person"}, "scope": " session "}}),
		rsNode("q", "memory_kg_query", []string{"exec-in:exec", "query_text:string", "max_in_tokens:number", "limit:number"},
			[]string{"exec-out:exec", "items:array", "count:number", "ok:boolean", "packets:array", "active_memory_text:string", "packed_count:number", "warnings:array"},
			map[string]any{"pinDefaults": map[string]any{"query_text": " who is ada ", "max_in_tokens": "800.9", "limit": "5"}, "outputKey": "kg.items"}),
		rsNode("r", "memory_kg_resolve", []string{"exec-in:exec", "label:string", "maxCandidates:number", "includeSemantic:boolean"},
			[]string{"exec-out:exec", "candidates:array", "count:number", "ok:boolean", "warnings:array"},
			map[string]any{"pinDefaults": map[string]any{"label": "Ada", "maxCandidates": 3.0, "includeSemantic": true}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "ids:any", "acount:any", "items:any", "amt:any", "packed:any", "qwarn:any", "cands:any", "rwarn:any", "rok:any"}, nil, nil),
	}, "start.exec-out>a.exec-in", "a.exec-out>q.exec-in", "q.exec-out>r.exec-in", "r.exec-out>end.exec-in",
		"a.assertion_ids>end.ids", "a.count>end.acount", "q.items>end.items", "q.active_memory_text>end.amt", "q.packed_count>end.packed",
		"q.warnings>end.qwarn", "r.candidates>end.cands", "r.warnings>end.rwarn", "r.ok>end.rok")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	payloads := map[durable.EffectType]map[string]any{}
	reply := func(et durable.EffectType, result any) runtime.Handler {
		return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			payloads[et] = pyjson.CloneObject(req.Effect.Payload)
			return runtime.Completed(result), nil
		}}
	}
	item := map[string]any{"subject": "ex:ada", "predicate": "rdf:type", "object": "ex:Person"}
	rt := newTestRuntime(t, memory.New(), map[durable.EffectType]runtime.Handler{
		durable.EffectMemoryKGAssert:  reply(durable.EffectMemoryKGAssert, map[string]any{"ok": true, "count": int64(1), "assertion_ids": []any{"as1"}}),
		durable.EffectMemoryKGQuery:   reply(durable.EffectMemoryKGQuery, map[string]any{"ok": true, "count": int64(1), "items": []any{item}, "packets_version": int64(0), "packets": []any{}, "packed_count": int64(1), "active_memory_text": "## KG ACTIVE MEMORY\nada is a person", "estimated_tokens": int64(9), "dropped": int64(0)}),
		durable.EffectMemoryKGResolve: reply(durable.EffectMemoryKGResolve, map[string]any{"ok": true, "count": int64(1), "candidates": []any{map[string]any{"id": "ex:ada"}}, "warnings": []any{"semantic off"}}),
	}, wf)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	a := payloads[durable.EffectMemoryKGAssert]
	if jsonText(t, a["assertions"]) != jsonText(t, []any{item}) || a["scope"] != "session" {
		t.Errorf("kg_assert payload %s, want the triple wrapped in a list and scope \"session\"", jsonText(t, a))
	}
	q := payloads[durable.EffectMemoryKGQuery]
	if q["query_text"] != "who is ada" || jsonText(t, q["max_input_tokens"]) != "800" || jsonText(t, q["limit"]) != "5" {
		t.Errorf("kg_query payload %s, want query_text trimmed, max_input_tokens 800, limit 5", jsonText(t, q))
	}
	r := payloads[durable.EffectMemoryKGResolve]
	if r["label"] != "Ada" || jsonText(t, r["max_candidates"]) != "3" || r["include_semantic"] != true {
		t.Errorf("kg_resolve payload %s, want label, max_candidates 3, include_semantic true", jsonText(t, r))
	}
	out := st.Output
	want := map[string]string{
		"ids": `["as1"]`, "acount": "1", "items": jsonText(t, []any{item}), "amt": `"## KG ACTIVE MEMORY\nada is a person"`,
		"packed": "1", "qwarn": "null", "cands": `[{"id": "ex:ada"}]`, "rwarn": `["semantic off"]`, "rok": "true",
	}
	for k, w := range want {
		if g := jsonText(t, out[k]); g != jsonText(t, mustDecode(t, w)) {
			t.Errorf("end.%s = %s, want %s", k, g, w)
		}
	}
	kg, _ := st.Vars["kg"].(map[string]any)
	if jsonText(t, kg["items"]) != jsonText(t, []any{item}) {
		t.Errorf("outputKey kg.items = %s, want the items list", jsonText(t, kg["items"]))
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := pyjson.Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}
