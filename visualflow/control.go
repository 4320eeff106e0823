package visualflow

import (
	"github.com/abstractframework/abstractgateway/runtime"
)

// control returns vars._temp._control = {stack, frames, return_to?}.
func (s *step) control() map[string]any {
	c := objectAt(s.tmp, "_control")
	if _, ok := c["stack"].([]any); !ok {
		c["stack"] = []any{}
	}
	objectAt(c, "frames")
	return c
}

// stack returns the control stack.
func (s *step) stack() []any {
	c, _ := s.tmp["_control"].(map[string]any)
	st, _ := c["stack"].([]any)
	return st
}

// activeControl returns the top of the control stack ("" when empty).
func (s *step) activeControl() string {
	st := s.stack()
	if len(st) == 0 {
		return ""
	}
	id, _ := st[len(st)-1].(string)
	return id
}

// push puts id on top of the control stack.
func (s *step) push(id string) {
	c := s.control()
	c["stack"] = append(c["stack"].([]any), id)
}

// removeFromStack pops id when on top, else removes all its occurrences.
func (s *step) removeFromStack(id string) {
	c := s.control()
	st := c["stack"].([]any)
	if len(st) > 0 && st[len(st)-1] == id {
		c["stack"] = st[:len(st)-1]
		return
	}
	s.dropFromStack(id)
}

// dropFromStack removes every occurrence of id from the control stack.
func (s *step) dropFromStack(id string) {
	c := s.control()
	st := c["stack"].([]any)
	kept := make([]any, 0, len(st))
	for _, x := range st {
		if x != id {
			kept = append(kept, x)
		}
	}
	c["stack"] = kept
}

// frames returns the scheduler frames by node id.
func (s *step) frames() map[string]any { return objectAt(s.control(), "frames") }

// setReturnTo sets _control.return_to.
func (s *step) setReturnTo(id string) { s.control()["return_to"] = id }

// controlReturn applies the control-return rule (§4.6.1) to the plan of
// node n: while a control node C other than n is active, a branch end
// returns to C instead of ending the run. on_flow_end is exempt.
func (s *step) controlReturn(n *node, plan runtime.StepPlan) runtime.StepPlan {
	c := s.activeControl()
	if c == "" || c == n.ID || n.Type == "on_flow_end" {
		return plan
	}
	switch {
	case plan.CompleteOutput != nil:
		s.setReturnTo(c)
		return runtime.Next(c)
	case plan.Effect != nil && plan.NextNode == "":
		s.setReturnTo(c)
		plan.NextNode = c
		return plan
	case plan.Effect == nil && plan.NextNode == "":
		s.setReturnTo(c)
		return runtime.Next(c)
	}
	return plan
}

// completeResult is the output of a run ending at a terminal node with
// result: the object plus success=true when absent, or {response, success}
// for non-objects (§4.7).
func completeResult(result any) map[string]any {
	if m, ok := result.(map[string]any); ok {
		out := copyObject(m)
		if _, ok := out["success"]; !ok {
			out["success"] = true
		}
		return out
	}
	return map[string]any{"response": result, "success": true}
}
