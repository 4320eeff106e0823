package bundle

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/visualflow/builtin"
)

// PackOptions configures Pack. Zero values mean the §7.3 defaults.
type PackOptions struct {
	// BundleID defaults to the root flow id.
	BundleID string
	// BundleVersion defaults to "0.0.0".
	BundleVersion string
	// Entrypoints lists entrypoint flow ids, each stripped, blank ones
	// dropped (an error if all are); default [root id].
	Entrypoints []string
	// DefaultEntrypoint (stripped) must be an entrypoint; blank means the
	// root id when it is an entrypoint, else the first entrypoint.
	DefaultEntrypoint string
	// Metadata is copied into the manifest (default {}).
	Metadata map[string]any
	// Now is the clock for created_at; nil means time.Now.
	Now func() time.Time
}

// Pack builds a bundle from a root VisualFlow file and a flows directory:
// the root plus, depth-first, every flow referenced by an exec-reachable
// subflow node, loaded from <flowsDir>/<id>.json (§7.3).
//
// The files may come from anyone, so each is held to the limits a bundle
// reader applies: at most maxEntrySize bytes, and the estimated decoded
// size of all of them at most maxDecodedSize, checked before each file is
// decoded. Pack thus refuses a small file that would decode to a huge
// structure, and never builds a bundle a reader would refuse for it.
func Pack(rootFlowPath, flowsDir string, opts PackOptions) (*Bundle, error) {
	budget := &budgeted{decodedLimit: maxDecodedSize}
	rootData, err := readFlowFile(rootFlowPath)
	if err == nil {
		err = budget.chargeDecoded(rootData)
	}
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", filepath.Base(rootFlowPath), err)
	}
	root, err := DecodeFlow(rootData)
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", filepath.Base(rootFlowPath), err)
	}
	rootID := FlowID(root)
	if rootID == "" {
		return nil, fmt.Errorf("packing %s: root flow has no id", filepath.Base(rootFlowPath))
	}
	b := &Bundle{
		Flows:     map[string]map[string]any{rootID: root},
		FlowBytes: map[string][]byte{rootID: rootData},
		Assets:    map[string][]byte{},
	}
	if err := collectSubflows(b, rootID, flowsDir, budget); err != nil {
		return nil, fmt.Errorf("packing %s: %w", rootID, err)
	}
	m, err := packManifest(b, rootID, opts)
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", rootID, err)
	}
	b.Manifest = m
	return b, nil
}

// collectSubflows loads, depth-first, every flow referenced from id,
// charging each to budget before decoding it.
func collectSubflows(b *Bundle, id, flowsDir string, budget *budgeted) error {
	refs, err := subflowRefs(b.Flows[id])
	if err != nil {
		return fmt.Errorf("flow %s: %w", id, err)
	}
	for _, ref := range refs {
		if _, done := b.Flows[ref]; done {
			continue
		}
		if CheckPath(ref) != nil || strings.ContainsAny(ref, `/\`) {
			return fmt.Errorf("flow %s: invalid subflow id %q", id, ref)
		}
		path := filepath.Join(flowsDir, ref+".json")
		data, err := readFlowFile(path)
		if err != nil {
			return fmt.Errorf("flow %s: subflow %s: %w", id, ref, err)
		}
		if err := budget.chargeDecoded(data); err != nil {
			return fmt.Errorf("flow %s: subflow %s (%s): %w", id, ref, path, err)
		}
		flow, err := DecodeFlow(data)
		if err != nil {
			return fmt.Errorf("flow %s: subflow %s (%s): %w", id, ref, path, err)
		}
		b.Flows[ref] = flow
		b.FlowBytes[ref] = data
		if err := collectSubflows(b, ref, flowsDir, budget); err != nil {
			return err
		}
	}
	return nil
}

// subflowRefs returns the child ids of the exec-reachable subflow nodes.
func subflowRefs(flow map[string]any) ([]string, error) {
	var refs []string
	for _, node := range reachableExecNodes(flow) {
		if NodeType(node) != "subflow" {
			continue
		}
		data := nodeData(node)
		ref := ""
		for _, k := range []string{"subflowId", "flowId"} {
			if s, ok := data[k].(string); ok && pyval.Strip(s) != "" {
				ref = pyval.Strip(s)
				break
			}
		}
		if ref == "" {
			return nil, fmt.Errorf("subflow node %q has no subflowId", nodeID(node))
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func packManifest(b *Bundle, rootID string, opts PackOptions) (Manifest, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	// created_at is written as Python's datetime.isoformat() writes it
	// (durable.FormatTime): no fraction at a whole second.
	m := Manifest{
		BundleFormatVersion: FormatVersion,
		BundleID:            pyval.Strip(opts.BundleID),
		BundleVersion:       pyval.Strip(opts.BundleVersion),
		CreatedAt:           durable.FormatTime(now()),
		Flows:               map[string]string{},
		Artifacts:           map[string]string{},
		Assets:              map[string]string{},
		Metadata:            opts.Metadata,
	}
	if m.BundleID == "" {
		m.BundleID = rootID
	}
	if m.BundleVersion == "" {
		m.BundleVersion = "0.0.0"
	}
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	for id := range b.Flows {
		m.Flows[id] = "flows/" + id + ".json"
	}
	// Entrypoint ids are stripped and blank ones dropped, as Python's
	// pack_workflow_bundle does; ids given but all blank are an error
	// there, not a fallback to the root.
	eps := []string{rootID}
	if len(opts.Entrypoints) > 0 {
		eps = nil
		for _, id := range opts.Entrypoints {
			if id = pyval.Strip(id); id != "" {
				eps = append(eps, id)
			}
		}
		if len(eps) == 0 {
			return Manifest{}, fmt.Errorf("no valid entrypoints specified")
		}
	}
	for _, id := range eps {
		flow, ok := b.Flows[id]
		if !ok {
			return Manifest{}, fmt.Errorf("entrypoint %q is not a collected flow", id)
		}
		m.Entrypoints = append(m.Entrypoints, entrypointOf(id, flow))
	}
	switch de := pyval.Strip(opts.DefaultEntrypoint); {
	case de != "":
		if _, ok := m.Entrypoint(de); !ok {
			return Manifest{}, fmt.Errorf("default entrypoint %q is not an entrypoint", de)
		}
		m.DefaultEntrypoint = de
	default:
		if _, ok := m.Entrypoint(rootID); ok {
			m.DefaultEntrypoint = rootID
		} else {
			m.DefaultEntrypoint = m.Entrypoints[0].FlowID
		}
	}
	if err := m.Validate(); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

func entrypointOf(id string, flow map[string]any) Entrypoint {
	ep := Entrypoint{FlowID: id, Name: id, Interfaces: []string{}}
	// Python's packer takes str(x or "") of both, so a hand-written
	// flow's number name 7 names the entrypoint "7".
	if s := pyval.StrOrEmpty(flow["name"]); pyval.Strip(s) != "" {
		ep.Name = s
	}
	ep.Description = pyval.StrOrEmpty(flow["description"])
	if list, ok := flow["interfaces"].([]any); ok {
		for _, x := range list {
			if s, ok := x.(string); ok && pyval.Strip(s) != "" {
				ep.Interfaces = append(ep.Interfaces, pyval.Strip(s))
			}
		}
	}
	return ep
}

// pureWithoutPins are the types that are pure when a node has no pin
// metadata, besides the builtin registry (§2 rule 4).
var pureWithoutPins = map[string]bool{
	"get_var": true, "get_context": true, "bool_var": true, "var_decl": true,
	"break_object": true, "tool_parameters": true,
}

// isExecNode classifies a node per spec §2.
func isExecNode(node map[string]any) bool {
	t := NodeType(node)
	if builtin.IsLiteral(t) {
		return false
	}
	if t == "join_exec" {
		return true
	}
	data := nodeData(node)
	var pinList []any
	for _, k := range []string{"inputs", "outputs"} {
		if l, ok := data[k].([]any); ok {
			pinList = append(pinList, l...)
		}
	}
	if len(pinList) > 0 {
		for _, p := range pinList {
			if pin, ok := p.(map[string]any); ok && pin["type"] == "execution" {
				return true
			}
		}
		return false
	}
	if pureWithoutPins[t] {
		return false
	}
	if t == "make_array" || t == "array_concat" {
		return true
	}
	_, isBuiltin := builtin.Lookup(t)
	return !isBuiltin
}

// reachableExecNodes returns the exec nodes reachable through exec edges
// from the flow's roots: the entryNode when it is an exec node (else the
// first exec node without an incoming exec edge, else the first exec node)
// plus every on_event node.
func reachableExecNodes(flow map[string]any) []map[string]any {
	if flow == nil {
		return nil
	}
	nodes := nodeList(flow)
	exec := map[string]map[string]any{}
	var order []string
	for _, n := range nodes {
		if id := nodeID(n); id != "" && isExecNode(n) {
			if _, dup := exec[id]; !dup {
				order = append(order, id)
			}
			exec[id] = n
		}
	}
	adj := map[string][]string{}
	hasIncoming := map[string]bool{}
	edges, _ := flow["edges"].([]any)
	for _, e := range edges {
		edge, ok := e.(map[string]any)
		if !ok || edge["targetHandle"] != "exec-in" {
			continue
		}
		src, dst := IDText(edge["source"]), IDText(edge["target"])
		if exec[src] == nil || exec[dst] == nil {
			continue
		}
		adj[src] = append(adj[src], dst)
		hasIncoming[dst] = true
	}
	var roots []string
	entry, _ := flow["entryNode"].(string)
	if exec[entry] != nil {
		roots = append(roots, entry)
	} else {
		for _, id := range order {
			if !hasIncoming[id] {
				roots = append(roots, id)
				break
			}
		}
		if len(roots) == 0 && len(order) > 0 {
			roots = append(roots, order[0])
		}
	}
	for _, id := range order {
		if NodeType(exec[id]) == "on_event" {
			roots = append(roots, id)
		}
	}
	seen := map[string]bool{}
	stack := roots
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[cur] {
			continue
		}
		seen[cur] = true
		stack = append(stack, adj[cur]...)
	}
	var out []map[string]any
	for _, id := range order {
		if seen[id] {
			out = append(out, exec[id])
		}
	}
	return out
}

// readFlowFile reads a flow file to pack, refusing one larger than a
// reader takes from a bundle (before reading it into memory).
func readFlowFile(path string) ([]byte, error) {
	// Stat first: opening a named pipe would block until a writer came.
	if info, err := os.Stat(path); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", filepath.Base(path), info.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEntrySize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxEntrySize {
		return nil, fmt.Errorf("%s: file larger than %d bytes, the most a bundle reader takes", filepath.Base(path), maxEntrySize)
	}
	return data, nil
}
