package visualflow

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/visualflow/builtin"
)

// CompileOptions tunes Compile. The zero value compiles a flow under its
// own id, entered per §3.3, refusing unknown node types.
type CompileOptions struct {
	// Bundle is the bundle ref named in errors ("" outside a bundle).
	Bundle string
	// WorkflowID overrides the flow id as the workflow id ("" keeps it).
	WorkflowID string
	// EntryNode overrides the flow's entry node (listener workflows enter
	// at their on_event node). It must name an exec node.
	EntryNode string
	// AllowUnknownTypes compiles node types outside the catalogue as the
	// identity function (the reference behaviour, §2); by default they are
	// refused at load.
	AllowUnknownTypes bool
	// ToolSpec resolves a tool name to its ToolSpec object
	// {name, description, parameters} for llm_call payloads. When nil,
	// tool names become {"name": <name>} specs.
	ToolSpec func(name string) (map[string]any, bool)
	// CodeFullAccess allows code nodes to request permissions=full_access
	// (the host opt-in of §6.9). The Starlark sandbox is used either way.
	CodeFullAccess bool
	// Logger receives compile warnings; discarded when nil.
	Logger *slog.Logger
}

// nodeKind is the classification of §2.
type nodeKind int

const (
	kindExec nodeKind = iota
	kindPure
	kindLiteral
)

// dataEdge is a wire into an input pin.
type dataEdge struct {
	pin    string
	src    *node
	srcPin string
}

// thenBranch is one declared branch of a sequence or parallel node;
// Target is "" when the handle has no edge.
type thenBranch struct {
	Handle string
	Target string
}

// node is a compiled node.
type node struct {
	ID      string
	Type    string
	Data    map[string]any
	Inputs  []pin
	Outputs []pin
	kind    nodeKind
	handler handlerKind
	pos     int // index in the document (after lowering)

	pinDefaults map[string]any
	declaredIn  map[string]bool // declared non-exec input pins
	pinOrder    []any           // their ids, in order (hidden _pin_order input)
	dataIn      []dataEdge      // connected input pins, sorted by pin id
	connected   map[string]bool
	referenced  map[string]bool // own output pins read by some data edge
	literal     map[string]any  // literal output {"value": …}
	pureFn      builtin.Func    // pure/builtin implementation, if any
	// pureViaFunction marks a pure node of a function-node type without a
	// builtin (if, switch, code, function, on_flow_end, the file nodes...):
	// it is evaluated by the function its exec form runs (§4.5), as the
	// reference builds one handler per type for both roles.
	pureViaFunction bool
	inputKey        string
	outputKey       string
	effectType      durable.EffectType

	// exec successors (§3.4)
	linear          string
	branches        map[string]string
	thens           []thenBranch // every declared then:* handle, sorted
	loopTarget      string
	doneTarget      string
	completedTarget string
}

// graph is the entry-independent compilation of one flow document: every
// node, wired for data and (once reached) for exec. CompileBundle builds it
// once per flow and derives the flow's workflow and each of its listener
// workflows from it, so that they share the compiled nodes instead of each
// compiling the whole flow again (which grew with the square of the flow).
// Nothing in it is written once the programs are derived (the wiring is
// done at compile time): node handlers only read it, as the runs of one
// workflow always shared their program, so sharing it between workflows
// gives runs no mutable state in common.
type graph struct {
	c           *compiler
	docEntry    string
	nodes       map[string]*node  // every node
	order       []*node           // every node, document order
	out         map[string][]edge // exec edges between exec nodes, by source
	hasIncoming map[string]bool   // exec nodes with an incoming exec edge
	// wired records the exec nodes whose successors are computed (and the
	// error when they are invalid), so that a node reached from several
	// entries is wired once.
	wired map[*node]error
}

// program is a compiled flow entered at one node, shared by the node
// handlers of its workflow. Its nodes belong to the graph.
type program struct {
	g          *graph
	flowID     string
	workflowID string
	entry      string
	reach      map[string]bool // exec nodes reachable from entry
	exec       []*node         // the same nodes, document order
	joinRoutes map[string][]route
	opts       CompileOptions
}

// node returns the node id as the program sees it: a reachable exec node,
// or any pure or literal node (those are never pruned).
func (p *program) node(id string) *node {
	n := p.g.nodes[id]
	if n == nil || (n.kind == kindExec && !p.reach[id]) {
		return nil
	}
	return n
}

// compiler holds the state of one compilation.
type compiler struct {
	opts       CompileOptions
	flowID     string
	joinRoutes map[string][]route
	// pinsIndexed counts the pins put into the lookup maps of
	// checkEdgeEndpoints; tests check that each is looked at once.
	pinsIndexed int
}

// Compile turns one VisualFlow document into a runtime workflow (§3).
// flow is the decoded JSON object; bundle.DecodeFlow decodes text as the
// bundle reader does, numbers kept as json.Number. Errors are
// *CompileError values naming the flow, node and pin.
func Compile(flow map[string]any, opts CompileOptions) (*runtime.Workflow, error) {
	g, err := compileGraph(flow, opts)
	if err != nil {
		return nil, err
	}
	p, err := g.program(opts)
	if err != nil {
		return nil, err
	}
	return p.workflow(), nil
}

// compileGraph parses, validates, lowers and wires a flow document. Its
// entry-dependent part (entry, pruning, successors) is left to program.
func compileGraph(flow map[string]any, opts CompileOptions) (*graph, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	d := parseDocument(flow)
	c := &compiler{opts: opts, flowID: d.ID, joinRoutes: map[string][]route{}}
	if d.ID == "" {
		return nil, &CompileError{Bundle: opts.Bundle, Msg: "flow has no id (id, flow_id or workflow_id)"}
	}
	if err := errors.Join(c.checkNodes(d), c.checkEdgeEndpoints(d)); err != nil {
		return nil, err
	}
	if err := c.lower(d); err != nil {
		return nil, err
	}
	g := &graph{c: c, docEntry: d.EntryNode, nodes: make(map[string]*node, len(d.Nodes)),
		order: make([]*node, 0, len(d.Nodes)), out: map[string][]edge{}, hasIncoming: map[string]bool{},
		wired: map[*node]error{}}
	for i, rn := range d.Nodes {
		n := c.newNode(rn)
		n.pos = i
		g.nodes[n.ID] = n
		g.order = append(g.order, n)
	}
	if err := c.wireData(g, d); err != nil {
		return nil, err
	}
	if err := c.checkPureCycles(g); err != nil {
		return nil, err
	}
	for _, e := range d.Edges {
		if e.isExec() && g.isExec(e.Source) && g.isExec(e.Target) {
			g.hasIncoming[e.Target] = true
			g.out[e.Source] = append(g.out[e.Source], e)
		}
	}
	return g, nil
}

// isExec reports whether id names an exec node.
func (g *graph) isExec(id string) bool {
	n := g.nodes[id]
	return n != nil && n.kind == kindExec
}

// checkNodes refuses duplicate ids and unknown node types.
func (c *compiler) checkNodes(d *document) error {
	// Every problem is reported, not just the first, so a validation
	// pass lists all that is wrong with a flow.
	var errs []error
	seen := map[string]bool{}
	for _, n := range d.Nodes {
		if seen[n.ID] {
			errs = append(errs, c.errorf(n.ID, "", "duplicate node id"))
		}
		seen[n.ID] = true
		switch {
		case n.Type == "":
			errs = append(errs, c.errorf(n.ID, "", "node has no type"))
		case (strings.HasPrefix(n.ID, joinPrefix) || strings.HasPrefix(n.ID, muxPrefix)) &&
			n.Type != "join_exec" && n.Type != "path_mux":
			errs = append(errs, c.errorf(n.ID, "", "node id uses a reserved internal prefix"))
		case !c.opts.AllowUnknownTypes && !KnownType(n.Type):
			errs = append(errs, c.errorf(n.ID, "", "unknown node type %q", n.Type))
		}
	}
	return errors.Join(errs...)
}

// checkEdgeEndpoints refuses edges to missing nodes or undeclared pins and
// wires between incompatible pin types.
func (c *compiler) checkEdgeEndpoints(d *document) error {
	byID := map[string]*rawNode{}
	for _, n := range d.Nodes {
		byID[n.ID] = n
	}
	// Pins are looked up in per-node maps, built on first use: a scan of
	// the declared pins per edge would take pins x edges on a node with
	// many wired pins.
	ins, outs := map[*rawNode]map[string]pin{}, map[*rawNode]map[string]pin{}
	index := func(cache map[*rawNode]map[string]pin, n *rawNode, pins []pin) map[string]pin {
		m, ok := cache[n]
		if !ok {
			m = pinIndex(pins)
			cache[n] = m
			c.pinsIndexed += len(pins)
		}
		return m
	}
	var errs []error
	for _, e := range d.Edges {
		src, dst := byID[e.Source], byID[e.Target]
		if src == nil {
			errs = append(errs, c.errorf(e.Source, e.SourceHandle, "edge %s.%s -> %s.%s starts at a missing node", e.Source, e.SourceHandle, e.Target, e.TargetHandle))
			continue
		}
		if dst == nil {
			errs = append(errs, c.errorf(e.Target, e.TargetHandle, "edge %s.%s -> %s.%s ends at a missing node", e.Source, e.SourceHandle, e.Target, e.TargetHandle))
			continue
		}
		sp, sok := index(outs, src, src.Outputs)[e.SourceHandle]
		tp, tok := index(ins, dst, dst.Inputs)[e.TargetHandle]
		if len(src.Outputs) > 0 && !sok && !builtin.IsLiteral(src.Type) {
			errs = append(errs, c.errorf(src.ID, e.SourceHandle, "edge to %s.%s starts at an output pin the node does not declare (outputs: %s)", e.Target, e.TargetHandle, pinIDs(src.Outputs)))
			continue
		}
		if len(dst.Inputs) > 0 && !tok {
			errs = append(errs, c.errorf(dst.ID, e.TargetHandle, "edge from %s.%s ends at an input pin the node does not declare (inputs: %s)", e.Source, e.SourceHandle, pinIDs(dst.Inputs)))
			continue
		}
		if sok && tok && !pinTypesCompatible(sp.Type, tp.Type) {
			errs = append(errs, c.errorf(dst.ID, e.TargetHandle, "type mismatch: cannot connect %s.%s (%s) to %s (%s)", src.ID, e.SourceHandle, sp.Type, e.TargetHandle, tp.Type))
			continue
		}
	}
	return errors.Join(errs...)
}

// pinIndex returns pins by id (the first of a repeated id, as a scan in
// order would find).
func pinIndex(pins []pin) map[string]pin {
	m := make(map[string]pin, len(pins))
	for _, p := range pins {
		if _, dup := m[p.ID]; !dup {
			m[p.ID] = p
		}
	}
	return m
}

// maxListedPins bounds the pins an error lists: every bad edge into a
// node names its pins, so listing them all would take pins x edges.
const maxListedPins = 32

// pinIDs lists the ids of pins for an error message.
func pinIDs(pins []pin) string {
	ids := make([]string, 0, min(len(pins), maxListedPins)+1)
	for _, p := range pins[:min(len(pins), maxListedPins)] {
		ids = append(ids, p.ID)
	}
	if len(pins) > maxListedPins {
		ids = append(ids, fmt.Sprintf("… %d more", len(pins)-maxListedPins))
	}
	return strings.Join(ids, ", ")
}

// classify applies §2.
func classify(rn *rawNode) nodeKind {
	switch {
	case builtin.IsLiteral(rn.Type):
		return kindLiteral
	case rn.Type == "join_exec":
		return kindExec
	}
	if len(rn.Inputs)+len(rn.Outputs) > 0 {
		for _, p := range append(slices.Clone(rn.Inputs), rn.Outputs...) {
			if p.Type == "execution" {
				return kindExec
			}
		}
		return kindPure
	}
	if slices.Contains(purePinlessTypes, rn.Type) || slices.Contains(builtinRegistry, rn.Type) {
		return kindPure
	}
	return kindExec
}

func (c *compiler) newNode(rn *rawNode) *node {
	n := &node{
		ID: rn.ID, Type: rn.Type, Data: rn.Data, Inputs: rn.Inputs, Outputs: rn.Outputs,
		kind: classify(rn), declaredIn: map[string]bool{}, connected: map[string]bool{},
		referenced: map[string]bool{}, branches: map[string]string{},
	}
	n.pinDefaults, _ = rn.Data["pinDefaults"].(map[string]any)
	if _, ok := n.pinDefaults[""]; ok {
		// The reference's loader keeps only non-empty keys
		// (_normalize_pin_defaults): a "" default would reach the node's
		// inputs and count as a resolved input.
		n.pinDefaults = maps.Clone(n.pinDefaults)
		delete(n.pinDefaults, "")
	}
	for _, p := range rn.Inputs {
		if p.Type != "execution" {
			n.declaredIn[p.ID] = true
			n.pinOrder = append(n.pinOrder, p.ID)
		}
	}
	n.inputKey = str(rn.Data["inputKey"])
	n.outputKey = str(rn.Data["outputKey"])
	switch n.kind {
	case kindLiteral:
		n.literal = map[string]any{"value": rn.Data["literalValue"]}
	case kindPure:
		n.pureFn, _ = builtin.Lookup(rn.Type)
		n.pureViaFunction = n.pureFn == nil && slices.Contains(functionTypes, rn.Type)
	case kindExec:
		n.handler = handlerOf(rn.Type)
		n.effectType = effectTypes[rn.Type]
		if n.handler == handlerFunction {
			n.pureFn, _ = builtin.Lookup(rn.Type)
		}
	}
	return n
}

// wireData builds the data-edge map (§3.2).
func (c *compiler) wireData(g *graph, d *document) error {
	for _, e := range d.Edges {
		if e.isExec() || e.SourceHandle == "exec-out" {
			continue
		}
		dst, src := g.nodes[e.Target], g.nodes[e.Source]
		if dst.connected[e.TargetHandle] {
			return c.errorf(dst.ID, e.TargetHandle, "multiple data edges target the same input pin")
		}
		dst.connected[e.TargetHandle] = true
		dst.dataIn = append(dst.dataIn, dataEdge{pin: e.TargetHandle, src: src, srcPin: e.SourceHandle})
		src.referenced[e.SourceHandle] = true
	}
	for _, n := range g.order {
		slices.SortStableFunc(n.dataIn, func(a, b dataEdge) int { return strings.Compare(a.pin, b.pin) })
	}
	return nil
}

// checkPureCycles refuses cycles among pure nodes (they could never be
// evaluated).
func (c *compiler) checkPureCycles(g *graph) error {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var visit func(n *node, path []string) error
	visit = func(n *node, path []string) error {
		color[n.ID] = grey
		path = append(path, n.ID)
		for _, de := range n.dataIn {
			if de.src.kind != kindPure {
				continue
			}
			switch color[de.src.ID] {
			case grey:
				return c.errorf(de.src.ID, de.srcPin, "cycle of pure nodes: %s -> %s", strings.Join(path, " -> "), de.src.ID)
			case white:
				if err := visit(de.src, path); err != nil {
					return err
				}
			}
		}
		color[n.ID] = black
		return nil
	}
	for _, n := range g.order {
		if n.kind == kindPure && color[n.ID] == white {
			if err := visit(n, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// program derives the workflow of the flow entered per opts: it picks
// the entry, prunes unreachable exec nodes and computes the successors of
// the reachable ones (§3.3–3.4). Only opts.WorkflowID and opts.EntryNode
// may differ from the options the graph was compiled with.
func (g *graph) program(opts CompileOptions) (*program, error) {
	c := g.c
	if opts.Logger == nil {
		opts.Logger = c.opts.Logger
	}
	p := &program{g: g, flowID: c.flowID, workflowID: c.flowID, joinRoutes: c.joinRoutes, opts: opts}
	if opts.WorkflowID != "" {
		p.workflowID = opts.WorkflowID
	}
	entry := ""
	switch {
	case opts.EntryNode != "":
		if !g.isExec(opts.EntryNode) {
			return nil, c.errorf(opts.EntryNode, "", "entry node override does not name an exec node")
		}
		entry = opts.EntryNode
	case g.isExec(g.docEntry):
		entry = g.docEntry
	default:
		for _, n := range g.order {
			if n.kind == kindExec && !g.hasIncoming[n.ID] {
				entry = n.ID
				break
			}
		}
		if entry == "" {
			for _, n := range g.order {
				if n.kind == kindExec {
					entry = n.ID
					break
				}
			}
		}
	}
	if entry == "" {
		return nil, c.errorf("", "", "Flow must have an entry node")
	}
	p.entry = entry
	p.reach = map[string]bool{entry: true}
	queue := []string{entry}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		p.exec = append(p.exec, g.nodes[id])
		for _, e := range g.out[id] {
			if !p.reach[e.Target] {
				p.reach[e.Target] = true
				queue = append(queue, e.Target)
			}
		}
	}
	slices.SortFunc(p.exec, func(a, b *node) int { return a.pos - b.pos })
	for _, n := range p.exec {
		if n.handler == handlerSubflow && subflowRef(n) == "" {
			return nil, c.errorf(n.ID, "", "subflow node has no subflowId")
		}
		if err := g.wire(n); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// wire computes the successors of a reachable exec node, once per graph.
func (g *graph) wire(n *node) error {
	if err, done := g.wired[n]; done {
		return err
	}
	err := g.c.successors(n, g.out[n.ID])
	g.wired[n] = err
	return err
}

// successors applies the table of §3.4 to one exec node.
func (c *compiler) successors(n *node, edges []edge) error {
	byHandle := map[string]string{}
	for _, e := range edges {
		h := e.SourceHandle
		if _, dup := byHandle[h]; dup {
			return c.errorf(n.ID, h, "multiple outgoing edges from the same execution output. Branching is not yet supported; use a Sequence node for fan-out")
		}
		byHandle[h] = e.Target
	}
	switch n.Type {
	case "sequence", "parallel":
		// Every declared then:* exec output, in the reference's order (by
		// number; a suffix that is not a number after all numbered ones),
		// connected or not: the frame's idx counts positions in this list.
		declared := map[string]bool{}
		type numbered struct {
			n int64
			h string
		}
		var thens []numbered
		for _, p := range n.Outputs {
			if rest, ok := strings.CutPrefix(p.ID, "then:"); ok && p.Type == "execution" {
				k, err := strconv.ParseInt(pyval.Strip(rest), 10, 64)
				if err != nil {
					k = 1e9 // the reference's sort key for a non-numeric suffix
				}
				declared[p.ID] = true
				thens = append(thens, numbered{k, p.ID})
			}
		}
		slices.SortStableFunc(thens, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
		for _, e := range edges { // in edge order: the error names the same handle every time
			h := e.SourceHandle
			if declared[h] || (n.Type == "parallel" && h == "completed") {
				continue
			}
			return c.errorf(n.ID, h, "Control node '%s' has unsupported execution outputs", n.ID)
		}
		for _, t := range thens {
			n.thens = append(n.thens, thenBranch{Handle: t.h, Target: byHandle[t.h]})
		}
		n.completedTarget = byHandle["completed"]
		return nil
	case "loop", "for", "while":
		for _, e := range edges {
			if h := e.SourceHandle; h != "loop" && h != "done" {
				return c.errorf(n.ID, h, "Control node '%s' has unsupported execution outputs", n.ID)
			}
		}
		n.loopTarget, n.doneTarget = byHandle["loop"], byHandle["done"]
		return nil
	}
	switch len(byHandle) {
	case 0:
		if n.Type == "join_exec" {
			return c.errorf(n.ID, "exec-out", "join_exec has no successor")
		}
		return nil
	case 1:
		for h, t := range byHandle {
			switch {
			case h == "exec-out" || h == "":
				n.linear = t
			case h == "true" || h == "false" || h == "default" || strings.HasPrefix(h, "case:"):
				n.branches[h] = t
			default:
				return c.errorf(n.ID, h, "unsupported branching output %q", h)
			}
		}
		return nil
	}
	ifStyle, switchStyle := true, true
	for h := range byHandle {
		if h != "true" && h != "false" {
			ifStyle = false
		}
		if h != "default" && !strings.HasPrefix(h, "case:") {
			switchStyle = false
		}
	}
	if !ifStyle && !switchStyle {
		return c.errorf(n.ID, "", "multiple outgoing edges with mixed handles %v. Branching is not yet supported; use a Sequence node for fan-out", slices.Sorted(maps.Keys(byHandle)))
	}
	for h, t := range byHandle {
		n.branches[h] = t
	}
	return nil
}

// workflow builds the runtime workflow of a compiled program.
func (p *program) workflow() *runtime.Workflow {
	wf := &runtime.Workflow{ID: p.workflowID, Entry: p.entry, Nodes: make(map[string]runtime.NodeFunc, len(p.exec))}
	for _, n := range p.exec {
		wf.Nodes[n.ID] = p.handler(n)
	}
	return wf
}
