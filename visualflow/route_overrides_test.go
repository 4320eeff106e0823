package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// routeOverrideFlow is start → sequence(then:0, then:1) → T twice, T a
// set_var writing vars.out from its value pin, which no data edge feeds:
// without overrides the pin takes the bus key `value` (§4.3).
func routeOverrideFlow(overrides any, entryRoutes any) map[string]any {
	data := map[string]any{"pinDefaults": map[string]any{"name": "out"}, "inputRouteOverrides": overrides}
	if entryRoutes != nil {
		data["entryRoutes"] = entryRoutes
	}
	return rsFlow("ovr", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "value:string"}, nil),
		rsNode("lit", "literal_string", nil, []string{"value:string"}, map[string]any{"literalValue": "override"}),
		rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		rsNode("T", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"}, data),
	}, "start.exec-out>seq.exec-in", "seq.then:0>T.exec-in", "seq.then:1>T.exec-in")
}

// inputRouteOverrides entries that name no usable route source are
// dropped before lowering, as the reference's
// multi_entry_lowering._parse_input_route_overrides does (a per-route
// value that is not an object, a blank route key, a ref without both
// sourceNodeId and sourceHandle; a pin left with none), and a pin with no surviving entry
// gets no path_mux. The unknown-route and missing-source checks apply to
// surviving entries only. Such stale editor metadata used to insert a mux
// anyway, which made the pin connected, so that it resolved to null
// instead of the bus key.
func TestUnusableRouteOverridesKeepPinUnwired(t *testing.T) {
	for name, overrides := range map[string]any{
		"empty per-route map":         map[string]any{"value": map[string]any{}},
		"ref without handle":          map[string]any{"value": map[string]any{"seq::then:0": map[string]any{"sourceNodeId": "start"}}},
		"ref with empty source":       map[string]any{"value": map[string]any{"seq::then:0": map[string]any{"sourceNodeId": " ", "sourceHandle": "value"}}},
		"per-route value not object":  map[string]any{"value": "stale"},
		"ref not an object":           map[string]any{"value": map[string]any{"seq::then:0": true}},
		"unknown route, dropped ref":  map[string]any{"value": map[string]any{"gone::exec-out": map[string]any{}}},
		"missing source, dropped ref": map[string]any{"value": map[string]any{"seq::then:0": map[string]any{"sourceNodeId": "gone"}}},
		"blank route key":             map[string]any{"value": map[string]any{" ": map[string]any{"sourceNodeId": "lit", "sourceHandle": "value"}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, st := startRunWith(t, routeOverrideFlow(overrides, nil), CompileOptions{}, map[string]any{"value": "hello"})
			if st.Status != "completed" {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			if got := st.Vars["out"]; got != "hello" {
				t.Fatalf("vars.out = %#v, want \"hello\" (the unwired pin filled from the bus, as without overrides)", got)
			}
		})
	}
}

// A usable ref survives next to dropped ones, under its trimmed route key
// and with the source/handle aliases: the last entry (then:1) takes the
// overriding literal.
func TestRouteOverrideKeepsUsableRefs(t *testing.T) {
	overrides := map[string]any{"value": map[string]any{
		" seq::then:1 ": map[string]any{"source": "lit", "handle": "value"},
		"seq::then:0":   map[string]any{},
	}}
	_, st := startRunWith(t, routeOverrideFlow(overrides, nil), CompileOptions{}, map[string]any{"value": "hello"})
	if st.Status != "completed" || st.Vars["out"] != "override" {
		t.Fatalf("status %s (%s), vars.out = %#v, want \"override\"", st.Status, st.Error, st.Vars["out"])
	}
	if _, err := Compile(routeOverrideFlow(map[string]any{"value": map[string]any{
		"nope": map[string]any{"sourceNodeId": "lit", "sourceHandle": "value"}}}, nil), CompileOptions{}); err == nil ||
		!strings.Contains(err.Error(), "unknown route key") {
		t.Fatalf("a usable ref to an unknown route: err %v, want unknown route key", err)
	}
}

// entryRoutes elements without a source node (or not objects) are skipped
// as the reference's _parse_entry_routes does; when none is left the
// routes come from the incoming exec edges. A partial list left by the
// skip is still checked against the edges.
func TestEntryRoutesWithoutSourceAreSkipped(t *testing.T) {
	skipped := []any{map[string]any{"sourceHandle": "then:0"}, "stale", map[string]any{"source": " ", "sourceHandle": "then:1"}}
	_, st := startRunWith(t, routeOverrideFlow(nil, skipped), CompileOptions{}, map[string]any{"value": "hello"})
	if st.Status != "completed" || st.Vars["out"] != "hello" {
		t.Fatalf("status %s (%s), vars.out = %#v", st.Status, st.Error, st.Vars["out"])
	}
	partial := []any{map[string]any{"sourceNodeId": "seq", "sourceHandle": "then:0"}, map[string]any{"sourceHandle": "then:1"}}
	if _, err := Compile(routeOverrideFlow(nil, partial), CompileOptions{}); err == nil || !strings.Contains(err.Error(), "entryRoutes mismatch") {
		t.Fatalf("partial entryRoutes: err %v, want entryRoutes mismatch", err)
	}
}

// §3.1 step 2: entryRoutes naming a route that is not an incoming exec
// edge is stale metadata and refused, even when every edge is listed.
func TestEntryRoutesWithAnExtraRouteAreRefused(t *testing.T) {
	x := setVarNode("X", "v", map[string]any{"value": int64(1)})
	x["data"].(map[string]any)["entryRoutes"] = []any{
		map[string]any{"sourceNodeId": "if", "sourceHandle": "true"},
		map[string]any{"sourceNodeId": "if", "sourceHandle": "false"},
		map[string]any{"sourceNodeId": "start", "sourceHandle": "exec-out"},
	}
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"}, nil),
		x,
	}, "start.exec-out>if.exec-in", "if.true>X.exec-in", "if.false>X.exec-in")
	_, err := Compile(flow, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "entryRoutes mismatch") {
		t.Fatalf("compile error = %v, want an entryRoutes mismatch", err)
	}
}

// overrideFlow is if(condition) → X (on_flow_end, pin via with the given
// pinDefaults) from both branches, via overridden for route if::true only.
func overrideFlow(cond bool, override map[string]any, xDefaults map[string]any) map[string]any {
	x := viaEnd()
	d := x["data"].(map[string]any)
	d["inputRouteOverrides"] = map[string]any{"via": map[string]any{"if::true": override}}
	if xDefaults != nil {
		d["pinDefaults"] = xDefaults
	}
	return rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"},
			map[string]any{"pinDefaults": map[string]any{"condition": cond}}),
		x, literalStringNode("lit", "overridden"),
	}, "start.exec-out>if.exec-in", "if.true>X.exec-in", "if.false>X.exec-in")
}

// §3.1 step 4: an overridden pin with no data edge keeps its pinDefaults
// value (as the mux fallback) on routes without an override.
func TestOverriddenPinKeepsItsDefaultOnOtherRoutes(t *testing.T) {
	st := runFlow(t, overrideFlow(false, map[string]any{"sourceNodeId": "lit", "sourceHandle": "value"}, map[string]any{"via": "dflt"}), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "dflt" {
		t.Fatalf("output = %s, want via = dflt (the pin default through the mux fallback)", jsonText(t, st.Output))
	}
}

// §3.1 step 4: an override names its source as sourceNodeId (alias
// source) and sourceHandle (alias handle).
func TestRouteOverrideAcceptsSourceAndHandleAliases(t *testing.T) {
	st := runFlow(t, overrideFlow(true, map[string]any{"source": "lit", "handle": "value"}, nil), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "overridden" {
		t.Fatalf("output = %s, want via = overridden (override given as {source, handle})", jsonText(t, st.Output))
	}
}
