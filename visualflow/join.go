package visualflow

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/runtime"
)

// runJoin determines which entry route was taken into a multi-entry
// target (§6.12) and continues to it.
func (s *step) runJoin(n *node) (runtime.StepPlan, error) {
	routes := s.p.joinRoutes[n.ID]
	prevNode, _ := s.tmp["prev_node_id"].(string)
	prevHandle, _ := s.tmp["prev_exec_handle"].(string)
	which := -1
	if prevNode == "" {
		which = 0
		s.warn(fmt.Sprintf("#FALLBACK join_exec '%s': prev_node_id missing; defaulting which=0.", n.ID))
	} else {
		for i, r := range routes {
			if r.Source == prevNode && r.Handle == prevHandle {
				which = i
				break
			}
		}
		if which < 0 {
			count := 0
			for i, r := range routes {
				if r.Source == prevNode {
					if which < 0 {
						which = i
					}
					count++
				}
			}
			if count > 1 {
				s.warn(fmt.Sprintf("#FALLBACK join_exec '%s': multiple incoming routes from '%s' but prev_exec_handle was missing; defaulting which=%d.", n.ID, prevNode, which))
			}
		}
	}
	which = max(0, min(which, len(routes)-1))
	rec := map[string]any{"which": int64(which)}
	if which < len(routes) {
		rec["from"] = routes[which].Source
		rec["from_handle"] = routes[which].Handle
	}
	s.setOutput(n.ID, rec)
	s.setHandle("exec-out")
	return runtime.Next(n.linear), nil
}
