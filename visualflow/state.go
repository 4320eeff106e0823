package visualflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// step is the view of one run a node handler works with. It is rebuilt
// from run vars at every step (no per-process cache), so a run resumes
// identically after a restart on any store (§4.5 "sync").
type step struct {
	ctx  context.Context
	p    *program
	run  *durable.RunState
	rc   *runtime.RunContext
	vars map[string]any
	tmp  map[string]any // vars._temp
	// evaluating is the chain of pure nodes being evaluated (cycle guard).
	evaluating []string
}

func (p *program) newStep(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) *step {
	if run.Vars == nil {
		run.Vars = map[string]any{}
	}
	return &step{ctx: ctx, p: p, run: run, rc: rc, vars: run.Vars, tmp: objectAt(run.Vars, "_temp")}
}

// now returns the runtime clock.
func (s *step) now() time.Time {
	if s.rc == nil {
		return time.Now().UTC()
	}
	return s.rc.Now().Time.UTC()
}

// objectAt returns m[key] as an object, creating it when missing or not an
// object.
func objectAt(m map[string]any, key string) map[string]any {
	o, ok := m[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		m[key] = o
	}
	return o
}

// nodeOutputs is vars._temp.node_outputs.
func (s *step) nodeOutputs() map[string]any { return objectAt(s.tmp, "node_outputs") }

// setOutput persists the output record of an exec node.
func (s *step) setOutput(id string, rec any) { s.nodeOutputs()[id] = rec }

// setBus writes the bus (_last_output).
func (s *step) setBus(v any) { s.vars["_last_output"] = v }

// setHandle records _temp.prev_exec_handle.
func (s *step) setHandle(h string) { s.tmp["prev_exec_handle"] = h }

// setFlowError records _flow_error and _flow_error_node.
func (s *step) setFlowError(node, msg string) {
	s.vars["_flow_error"] = msg
	s.vars["_flow_error_node"] = node
}

// warn appends a de-duplicated warning to _flow_warnings.
func (s *step) warn(msg string) {
	list, _ := s.vars["_flow_warnings"].([]any)
	if slices.Contains(list, any(msg)) {
		return
	}
	s.vars["_flow_warnings"] = append(list, msg)
}

// lookup returns the output record of a node as the node-output store
// sees it (§4.5): literal baseline, persisted exec outputs, and the
// mapping of stored effect outcomes for effect nodes.
func (s *step) lookup(n *node) (any, bool) {
	switch n.kind {
	case kindLiteral:
		return n.literal, true
	case kindPure:
		return nil, false
	}
	rec, has := s.nodeOutputs()[n.ID]
	if isEffectNode(n) {
		effects, _ := s.tmp["effects"].(map[string]any)
		if raw, ok := effects[n.ID]; ok {
			return s.mapEffect(n, raw, rec), true
		}
	}
	return rec, has
}

// isEffectNode reports whether a node's pins come from _temp.effects.
func isEffectNode(n *node) bool {
	switch n.handler {
	case handlerEffect, handlerSubflow, handlerOnEvent, handlerOnSchedule, handlerEmitEvent:
		return n.kind == kindExec
	}
	return false
}

// pull reads one output pin of src (§4.5).
func (s *step) pull(src *node, pinID string) (any, bool, error) {
	var out any
	if src.kind == kindPure {
		v, err := s.evaluate(src)
		if err != nil {
			return nil, false, err
		}
		out = v
	} else {
		v, ok := s.lookup(src)
		if !ok {
			return nil, false, nil
		}
		out = v
	}
	if m, ok := out.(map[string]any); ok {
		if v, ok := m[pinID]; ok {
			return v, true, nil
		}
	}
	if pinID == "result" || pinID == "output" {
		return out, true, nil
	}
	return nil, false, nil
}

// evaluate runs a pure node on its wires and defaults (§4.5). Pure nodes
// are uncached: every pull re-evaluates (Q10), so a graph that pulls the
// same nodes many times costs exponentially many evaluations within one
// step. Each evaluation therefore checks the tick's context, so that a
// deadline, Stop or cancel ends the step, which the node handler then
// reports as interrupted (the run stays at its checkpoint), instead of
// the evaluation holding the run and the worker until it is done.
func (s *step) evaluate(n *node) (any, error) {
	if s.ctx != nil && s.ctx.Err() != nil {
		return nil, fmt.Errorf("evaluating pure node %s: %w", n.ID, context.Cause(s.ctx))
	}
	if slices.Contains(s.evaluating, n.ID) {
		return nil, nodeErrorf("Data edge cycle detected at '%s'", n.ID)
	}
	s.evaluating = append(s.evaluating, n.ID)
	defer func() { s.evaluating = s.evaluating[:len(s.evaluating)-1] }()
	inputs := make(map[string]any, len(n.dataIn)+len(n.pinDefaults)+2)
	for _, de := range n.dataIn {
		v, ok, err := s.pull(de.src, de.srcPin)
		if err != nil {
			return nil, err
		}
		if ok {
			inputs[de.pin] = v
		}
	}
	for k, dv := range n.pinDefaults {
		if n.connected[k] {
			continue
		}
		if _, ok := inputs[k]; !ok {
			inputs[k] = pyval.DeepCopy(dv)
		}
	}
	return s.callPure(n, inputs)
}

// callPure calls the implementation of a pure (or builtin) node.
func (s *step) callPure(n *node, inputs map[string]any) (any, error) {
	if n.pureViaFunction {
		return s.callPureFunction(n, inputs)
	}
	if n.pureFn == nil {
		return pureFallback(n, inputs), nil
	}
	if lv, ok := n.Data["literalValue"]; ok {
		inputs["_literalValue"] = lv
	}
	if n.pinOrder != nil {
		inputs["_pin_order"] = n.pinOrder
	}
	env := s.env(n)
	out, err := n.pureFn(env, inputs)
	if err != nil {
		return nil, &nodeError{msg: err.Error()}
	}
	return out, nil
}

// callPureFunction evaluates a pure node of a function-node type with the
// function its exec form runs (callFunction). Its output is what the exec
// form would persist (a code node's record, not only its result); an error
// propagates to the consumer as any pure node's. File nodes get the run's
// workspace scope as in their exec form: the reference passes a pure node
// only its pins, which would leave its file access unscoped.
func (s *step) callPureFunction(n *node, inputs map[string]any) (any, error) {
	if fileNodes[n.Type] {
		s.withWorkspace(inputs)
	}
	result, rec, err := s.callFunction(n, inputs)
	if err != nil {
		var ne *nodeError
		if !errors.As(err, &ne) {
			err = &nodeError{msg: err.Error()}
		}
		return nil, err
	}
	if rec != nil {
		return rec, nil
	}
	return result, nil
}

// pureFallback evaluates the pure nodes that have no function of their
// own: host catalogues (empty here) and the types whose exec form is not a
// function (unknown types, schedulers, effect, agent, subflow and writer
// nodes: identity, §2; their effect or write never runs as a pure node).
func pureFallback(n *node, inputs map[string]any) any {
	switch n.Type {
	case "provider_catalog":
		return map[string]any{"providers": []any{}}
	case "provider_models":
		prov, _ := inputs["provider"].(string)
		if prov == "" {
			if cfg, ok := n.Data["providerModelsConfig"].(map[string]any); ok {
				prov, _ = cfg["provider"].(string)
			}
		}
		return map[string]any{"provider": prov, "models": []any{}}
	case "model_catalog":
		return map[string]any{"providers": []any{}, "models": []any{}, "pair": nil, "provider": "", "model": ""}
	}
	return inputs
}
