package visualflow

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// BundleOptions tunes CompileBundle.
type BundleOptions struct {
	// Compile is applied to every flow (Bundle, WorkflowID and EntryNode
	// are set per flow).
	Compile CompileOptions
	// ReactPlaceholders registers ReactPlaceholder workflows for agent
	// nodes (default false: the host registers real ReAct workflows).
	ReactPlaceholders bool
}

// AgentInfo describes an agent node and the ReAct workflow it needs.
type AgentInfo struct {
	NodeID          string   `json:"node_id"`
	ReactWorkflowID string   `json:"react_workflow_id"`
	Tools           []string `json:"tools,omitempty"`
}

// FlowInfo describes one compiled flow of a bundle.
type FlowInfo struct {
	FlowID     string `json:"flow_id"`
	WorkflowID string `json:"workflow_id"`
	Entry      string `json:"entry"`
	// NodeTypes counts reachable exec, pure and literal nodes by type.
	NodeTypes map[string]int `json:"node_types"`
	// Effects lists the effect types the reachable nodes may request.
	Effects []string `json:"effects"`
	// Subflows lists child workflow ids of reachable subflow nodes.
	Subflows []string    `json:"subflows,omitempty"`
	Agents   []AgentInfo `json:"agents,omitempty"`
	// Listeners lists derived on_event listener workflow ids.
	Listeners []string `json:"listeners,omitempty"`
	// NeedsLLM reports whether running the flow needs an llm_call handler:
	// its own reachable nodes (llm_call or agent) or those of any flow of
	// the bundle it starts as a subflow, at any depth. Unlike Effects, it
	// looks through subflows, since a host decides from it whether to
	// wire an LLM for the whole run.
	NeedsLLM bool `json:"needs_llm"`

	// subflowNodes pairs every reachable subflow node with its reference,
	// so that a reference to a missing flow names the node to fix.
	subflowNodes []subflowNode
	// subflowSet holds Subflows, kept across addExec calls: rebuilding it
	// per listener would make summarising grow with listeners x subflows.
	subflowSet map[string]bool
}

// subflowNode is one subflow node of a flow and the workflow it starts.
type subflowNode struct {
	node, ref string
}

// CompiledBundle is every workflow a bundle needs registered.
type CompiledBundle struct {
	Bundle    *bundle.Bundle
	Flows     []*FlowInfo // sorted by flow id
	Workflows []*runtime.Workflow
}

// Register puts every workflow of the bundle into reg (replacing earlier
// versions with the same ids).
func (cb *CompiledBundle) Register(reg *runtime.Registry) error {
	for _, wf := range cb.Workflows {
		if err := reg.Put(wf); err != nil {
			return fmt.Errorf("registering %s: %w", wf.ID, err)
		}
	}
	return nil
}

// Flow returns the info of a flow by (bare) flow id.
func (cb *CompiledBundle) Flow(flowID string) (*FlowInfo, bool) {
	for _, f := range cb.Flows {
		if f.FlowID == flowID {
			return f, true
		}
	}
	return nil, false
}

// CompileBundle namespaces (§8.2–8.3) and compiles every flow of b, plus
// one listener workflow per on_event node (§5.7) and, when asked, ReAct
// placeholders for agent nodes. A flow that fails to compile fails the
// whole bundle with a *CompileError naming bundle, flow, node and pin.
func CompileBundle(b *bundle.Bundle, opts BundleOptions) (*CompiledBundle, error) {
	ref := b.Ref()
	if len(b.Manifest.Flows) == 0 {
		return nil, &CompileError{Bundle: ref, Msg: "bundle has no flows"}
	}
	flows, err := bundle.Namespace(b)
	if err != nil {
		return nil, &CompileError{Bundle: ref, Msg: "namespacing flows", Err: err}
	}
	cb := &CompiledBundle{Bundle: b}
	seen := map[string]bool{}
	// Every flow is compiled even when one fails, so all problems of the
	// bundle are reported together.
	var errs []error
	// Flow ids come from the manifest, as Python's load_from_dir iterates
	// man.flows.items(): the namespaced id cannot be split back, since a
	// bundle id may itself hold ':' ("team:tools@1.0.0:main").
	for _, flowID := range slices.Sorted(maps.Keys(b.Manifest.Flows)) {
		wfID := bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, flowID)
		flow := flows[wfID]
		co := opts.Compile
		co.Bundle, co.WorkflowID, co.EntryNode = ref, wfID, ""
		g, err := compileGraph(flow, co)
		if err != nil {
			errs = append(errs, withFlow(err, flowID))
			continue
		}
		p, err := g.program(co)
		if err != nil {
			errs = append(errs, withFlow(err, flowID))
			continue
		}
		info := p.info(flowID)
		// Listeners are entered at their own on_event node, so they reach
		// nodes the entry does not: their subflows, agents and effects
		// count as the flow's. They share the flow's compiled graph.
		var listeners []*program
		absorbed := map[*node]bool{}
		for _, n := range p.exec {
			absorbed[n] = true
		}
		for _, n := range g.listenerNodes() {
			co.WorkflowID, co.EntryNode = bundle.ListenerWorkflowID(wfID, n), n
			lp, err := g.program(co)
			if err != nil {
				errs = append(errs, withFlow(err, flowID))
				continue
			}
			listeners = append(listeners, lp)
			info.Listeners = append(info.Listeners, co.WorkflowID)
			info.absorb(lp, absorbed)
		}
		if err := checkSubflows(b, info); err != nil {
			errs = append(errs, err)
			continue
		}
		cb.Workflows = append(cb.Workflows, p.workflow())
		for _, lp := range listeners {
			cb.Workflows = append(cb.Workflows, lp.workflow())
		}
		if opts.ReactPlaceholders {
			for _, a := range info.Agents {
				if !seen[a.ReactWorkflowID] {
					seen[a.ReactWorkflowID] = true
					cb.Workflows = append(cb.Workflows, ReactPlaceholder(a.ReactWorkflowID))
				}
			}
		}
		cb.Flows = append(cb.Flows, info)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	propagateNeedsLLM(cb.Flows)
	return cb, nil
}

// propagateNeedsLLM marks as needing an LLM every flow that starts, through
// subflows of the bundle at any depth, a flow that needs one. It walks the
// subflow edges backwards from the flows that need one themselves, so that
// cycles end and each edge is looked at once. References outside the
// bundle are not known here and are not followed.
func propagateNeedsLLM(flows []*FlowInfo) {
	parents := map[string][]*FlowInfo{}
	var queue []*FlowInfo
	for _, fi := range flows {
		for _, sub := range fi.Subflows {
			parents[sub] = append(parents[sub], fi)
		}
		if fi.NeedsLLM {
			queue = append(queue, fi)
		}
	}
	for len(queue) > 0 {
		fi := queue[0]
		queue = queue[1:]
		for _, p := range parents[fi.WorkflowID] {
			if !p.NeedsLLM {
				p.NeedsLLM = true
				queue = append(queue, p)
			}
		}
	}
}

// checkSubflows refuses subflow nodes of info that start a flow of this
// bundle the bundle does not have, naming each such node.
func checkSubflows(b *bundle.Bundle, info *FlowInfo) error {
	// A reference is to this bundle when it starts with its own namespace
	// prefix; splitting it on ':' would misread a bundle id holding ':'.
	ownPrefix := bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, "")
	var errs []error
	for _, sn := range info.subflowNodes {
		missing := ""
		if !strings.Contains(sn.ref, ":") {
			missing = sn.ref
		} else if fid, own := strings.CutPrefix(sn.ref, ownPrefix); own {
			if _, ok := b.Manifest.Flows[fid]; !ok {
				missing = fid
			}
		}
		if missing != "" {
			errs = append(errs, &CompileError{Bundle: b.Ref(), Flow: info.FlowID, Node: sn.node,
				Msg: fmt.Sprintf("subflow references flow %q, which is not in the bundle", missing)})
		}
	}
	return errors.Join(errs...)
}

// withFlow names the flow (its id in the bundle, not the namespaced
// workflow id) in every CompileError of err, joined errors included.
func withFlow(err error, flowID string) error {
	if ce, ok := err.(*CompileError); ok {
		ce.Flow = flowID
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			withFlow(e, flowID)
		}
	}
	return err
}

// listenerNodes returns the ids of every on_event node of the document
// (reachable or not: listeners are entered at their own node).
func (g *graph) listenerNodes() []string {
	var ids []string
	for _, n := range g.order {
		if n.Type == "on_event" && n.kind == kindExec {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// absorb adds to fi the subflows, agents and effects of the exec nodes of
// o, a program of the same flow entered elsewhere (a listener), that are
// not yet in absorbed. Each node is looked at once over all listeners, so
// that summarising stays proportional to the flow.
func (fi *FlowInfo) absorb(o *program, absorbed map[*node]bool) {
	var fresh []*node
	for _, n := range o.exec {
		if !absorbed[n] {
			absorbed[n] = true
			fresh = append(fresh, n)
		}
	}
	effects := map[string]bool{}
	for _, e := range fi.Effects {
		effects[e] = true
	}
	fi.addExec(fresh, o.flowID, effects)
	fi.Effects = slices.Sorted(maps.Keys(effects))
	fi.NeedsLLM = effects["llm_call"]
}

// info summarises a compiled program: its reachable exec nodes and every
// pure and literal node of the flow.
func (p *program) info(flowID string) *FlowInfo {
	fi := &FlowInfo{FlowID: flowID, WorkflowID: p.workflowID, Entry: p.entry, NodeTypes: map[string]int{}}
	for _, n := range p.g.order {
		if !isInternal(n) && (n.kind != kindExec || p.reach[n.ID]) {
			fi.NodeTypes[n.Type]++
		}
	}
	effects := map[string]bool{}
	fi.addExec(p.exec, p.flowID, effects)
	fi.Effects = slices.Sorted(maps.Keys(effects))
	fi.NeedsLLM = effects["llm_call"]
	return fi
}

// isInternal reports whether n was generated by lowering.
func isInternal(n *node) bool {
	return strings.HasPrefix(n.ID, joinPrefix) || strings.HasPrefix(n.ID, muxPrefix)
}

// addExec adds to fi the subflows and agents of exec nodes (in document
// order), and their effect types to effects. Subflows already listed are
// not repeated.
func (fi *FlowInfo) addExec(nodes []*node, flowID string, effects map[string]bool) {
	if fi.subflowSet == nil {
		fi.subflowSet = map[string]bool{}
		for _, sub := range fi.Subflows {
			fi.subflowSet[sub] = true
		}
	}
	subflows := fi.subflowSet
	for _, n := range nodes {
		if isInternal(n) {
			continue
		}
		if n.effectType != "" {
			effects[string(n.effectType)] = true
		}
		switch n.handler {
		case handlerSubflow:
			effects["start_subworkflow"] = true
			if ref := subflowRef(n); ref != "" {
				fi.subflowNodes = append(fi.subflowNodes, subflowNode{node: n.ID, ref: ref})
				if !subflows[ref] {
					subflows[ref] = true
					fi.Subflows = append(fi.Subflows, ref)
				}
			}
		case handlerAgent:
			effects["start_subworkflow"], effects["llm_call"] = true, true
			a := AgentInfo{NodeID: n.ID, ReactWorkflowID: n.reactWorkflowID(flowID)}
			for _, t := range uniqueStrings(agentConfig(n)["tools"]) {
				a.Tools = append(a.Tools, t.(string))
			}
			fi.Agents = append(fi.Agents, a)
		case handlerOnEvent:
			effects["wait_event"] = true
		case handlerOnSchedule:
			effects["wait_until"] = true
		case handlerEmitEvent:
			effects["emit_event"] = true
		}
	}
}
