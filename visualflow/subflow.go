package visualflow

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// subflowRef returns the child workflow id of a subflow node.
func subflowRef(n *node) string {
	for _, k := range []string{"subflowId", "flowId", "workflowId", "workflow_id"} {
		if s := str(n.Data[k]); s != "" {
			return s
		}
	}
	return ""
}

var droppedChildKeys = []string{"inherit_context", "inheritContext", "child_session_id", "childSessionId", "session_id", "sessionId"}

// runSubflow starts the child flow as a durable child run and waits for
// it (§5.5).
func (s *step) runSubflow(n *node) (runtime.StepPlan, error) {
	bus := s.busInput()
	resolved, err := s.resolveInputs(n, bus)
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (subflow): resolving inputs: %w", n.ID, err)
	}
	wfID := subflowRef(n)
	if wfID == "" {
		return runtime.StepPlan{}, fmt.Errorf("node %s (subflow): no subflowId", n.ID)
	}
	var forwarded []string
	for _, p := range n.pinOrder {
		if id := p.(string); id != "inherit_context" && id != "inheritContext" {
			forwarded = append(forwarded, id)
		}
	}
	var base map[string]any
	if m, ok := resolved["vars"].(map[string]any); ok {
		base = copyObject(m)
	} else if m, ok := resolved["input"].(map[string]any); ok {
		base = copyObject(m)
	} else {
		base = map[string]any{}
	}
	child := base
	if len(resolved) == 0 && isScalarBus(bus) {
		// Nothing resolved: the reference's builder receives the bus
		// itself and passes it in the single forwarded pin, else as input.
		name := "input"
		if len(forwarded) == 1 {
			name = forwarded[0]
		}
		child = map[string]any{name: bus}
	} else if len(forwarded) > 0 {
		for _, p := range forwarded {
			if _, isObj := resolved[p].(map[string]any); (p == "vars" || p == "input") && isObj {
				continue
			}
			if v, ok := resolved[p]; ok {
				child[p] = v
			}
		}
	} else if len(base) == 0 {
		child = copyObject(resolved)
	}
	// The first present key decides, as in the reference: a blank
	// child_session_id means "no override" and does not fall through to a
	// session_id further down the list.
	session := ""
	if v, ok := first(resolved, "child_session_id", "childSessionId", "session_id", "sessionId"); ok {
		session = pyStripped(v)
	}
	for _, k := range droppedChildKeys {
		delete(child, k)
	}
	inherit := false
	if v, ok := first(resolved, "inherit_context", "inheritContext"); ok {
		inherit = pyval.CoerceBool(v)
	} else if cfg, ok := n.Data["effectConfig"].(map[string]any); ok {
		// The configured default is bool() of the first non-null key (so
		// the text "false" is true), unlike the pin's coercion above.
		inherit = pyval.Truthy(firstNonNull(cfg, "inherit_context", "inheritContext"))
	}
	child, _ = pyval.DeepCopy(child).(map[string]any)
	if inherit {
		s.inheritContext(child)
	}
	payload := map[string]any{"workflow_id": wfID, "vars": child, "async": true, "wait": true}
	if session != "" {
		payload["session_id"] = session
	}
	return s.effectPlan(n, durable.EffectStartSubworkflow, payload, n.linear), nil
}

// inheritContext merges the parent's active context into the child's
// (§5.5).
func (s *step) inheritContext(child map[string]any) {
	pctx, _ := s.vars["context"].(map[string]any)
	view := activeContext(pctx, s.vars)
	if len(view) == 0 {
		return
	}
	cctx := objectAt(child, "context")
	cmsgs, _ := cctx["messages"].([]any)
	var childSys, childRest, parentSys, parentRest []any
	// Only message objects take part, as the reference's merge: a stray
	// string or null in the child's messages is dropped.
	split := func(list []any, sys, rest *[]any) {
		for _, m := range list {
			o, ok := m.(map[string]any)
			switch {
			case !ok:
			case o["role"] == "system":
				*sys = append(*sys, m)
			default:
				*rest = append(*rest, m)
			}
		}
	}
	split(cmsgs, &childSys, &childRest)
	split(view, &parentSys, &parentRest)
	seen := map[string]bool{}
	merged := []any{}
	for _, group := range [][]any{childSys, parentSys, parentRest, childRest} {
		for _, m := range group {
			// An id is compared stripped; a blank one is no id (never
			// de-duplicated), as the reference's _msg_id.
			md, _ := m.(map[string]any)["metadata"].(map[string]any)
			if raw, ok := md["message_id"].(string); ok {
				if id := pyval.Strip(raw); id != "" {
					if seen[id] {
						continue
					}
					seen[id] = true
				}
			}
			merged = append(merged, m)
		}
	}
	cctx["messages"] = merged
	if _, has := cctx["attachments"]; !has {
		att, _ := pctx["attachments"].([]any)
		if kept := cleanAttachments(att); len(kept) > 0 {
			cctx["attachments"] = kept
		}
	}
}

// mapSubflow maps the resume payload of a subflow node to its pins (§5.5).
func (s *step) mapSubflow(n *node, out map[string]any, raw any) any {
	rm, _ := raw.(map[string]any)
	out["sub_run_id"] = rm["sub_run_id"]
	output := rm["output"]
	if om, ok := output.(map[string]any); ok {
		if r, has := om["result"]; has {
			out["output"], out["child_output"] = r, om
		} else {
			out["output"], out["child_output"] = om, om
		}
	} else {
		out["output"], out["child_output"] = output, output
	}
	var pins []string
	for _, p := range dataPins(n.Outputs) {
		if p != "output" && p != "sub_run_id" && p != "child_output" {
			pins = append(pins, p)
		}
	}
	om, isObj := out["output"].(map[string]any)
	for _, p := range pins {
		switch {
		case isObj:
			out[p] = om[p]
		case len(pins) == 1:
			out[p] = out["output"]
		}
	}
	return out
}
