package bundle

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// subflowRefKeys are the node data keys that name a subflow's child flow.
var subflowRefKeys = []string{"subflowId", "flowId", "workflowId", "workflow_id"}

// WorkflowID returns the namespaced workflow id "<bundle>@<version>:<flow>".
func WorkflowID(bundleID, version, flowID string) string {
	return bundleID + "@" + version + ":" + flowID
}

// SplitWorkflowID splits "<bundle>[@<version>]:<flow>" on the first ':'
// and its prefix on the first '@'. version is "" for the legacy
// "<bundle>:<flow>" form. ok is false when id is not namespaced.
func SplitWorkflowID(id string) (bundleID, version, flowID string, ok bool) {
	prefix, flow, found := strings.Cut(id, ":")
	if !found || prefix == "" || flow == "" {
		return "", "", "", false
	}
	bundleID, version, _ = strings.Cut(prefix, "@")
	if bundleID == "" {
		return "", "", "", false
	}
	return bundleID, version, flow, true
}

var unsafeIDRun = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Sanitize strips s as Python's str.strip does, then replaces every run
// of characters outside [A-Za-z0-9_-] with '_'; an empty result becomes
// "unknown".
func Sanitize(s string) string {
	out := unsafeIDRun.ReplaceAllString(pyval.Strip(s), "_")
	if out == "" {
		return "unknown"
	}
	return out
}

// ReactWorkflowID returns the ReAct child workflow id of an agent node.
func ReactWorkflowID(flowID, nodeID string) string {
	return "visual_react_agent_" + Sanitize(flowID) + "_" + Sanitize(nodeID)
}

// ListenerWorkflowID returns the derived listener workflow id of an
// on_event node (§5.7).
func ListenerWorkflowID(flowID, nodeID string) string {
	return "visual_event_listener_" + Sanitize(flowID) + "_" + Sanitize(nodeID)
}

// Namespace returns a deep copy of every flow of b, keyed by namespaced
// workflow id, with: id rewritten to the namespaced id; subflow references
// (data.subflowId/flowId/workflowId/workflow_id of subflow nodes) that name
// a flow of the same manifest rewritten to its namespaced id; and
// data.agentConfig._react_workflow_id set on every agent node.
func Namespace(b *Bundle) (map[string]map[string]any, error) {
	m := b.Manifest
	out := make(map[string]map[string]any, len(b.Flows))
	for _, flowID := range slices.Sorted(maps.Keys(m.Flows)) {
		src, ok := b.Flows[flowID]
		if !ok {
			return nil, fmt.Errorf("namespacing bundle %s: flow %s is not loaded", label(b, b.Source), flowID)
		}
		flow, _ := pyval.DeepCopy(src).(map[string]any)
		nsID := WorkflowID(m.BundleID, m.BundleVersion, flowID)
		flow["id"] = nsID
		for _, node := range nodeList(flow) {
			switch NodeType(node) {
			case "subflow":
				data, ok := node["data"].(map[string]any)
				if !ok {
					continue
				}
				for _, k := range subflowRefKeys {
					s, ok := data[k].(string)
					if !ok {
						continue
					}
					if ref := pyval.Strip(s); ref != "" {
						if _, inBundle := m.Flows[ref]; inBundle {
							data[k] = WorkflowID(m.BundleID, m.BundleVersion, ref)
						}
					}
				}
			case "agent":
				data, ok := node["data"].(map[string]any)
				if !ok {
					data = map[string]any{}
					node["data"] = data
				}
				cfg, ok := data["agentConfig"].(map[string]any)
				if !ok {
					cfg = map[string]any{}
					data["agentConfig"] = cfg
				}
				cfg["_react_workflow_id"] = ReactWorkflowID(nsID, nodeID(node))
			}
		}
		out[nsID] = flow
	}
	return out, nil
}
