package visualflow

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// route is one entry route into a multi-entry target (§3.1).
type route struct {
	Key    string `json:"key"`
	Source string `json:"source"`
	Handle string `json:"handle"`
}

const (
	joinPrefix = "__internal_join_exec__"
	muxPrefix  = "__internal_path_mux__"
)

// lower applies multi-entry lowering (§3.1): every node with more than
// one incoming exec edge gets a join_exec node in front of it and a
// path_mux per overridden input pin. Stale entryRoutes metadata (routes
// that no longer match the exec edges) is refused.
//
// The edge list is rebuilt once, not per target (which took targets x
// edges): the document's edges, less the exec edges into the targets and
// with overridden data edges rewired in place, then the edges generated
// for each target in target order.
func (c *compiler) lower(d *document) error {
	byID := map[string]*rawNode{}
	for _, n := range d.Nodes {
		byID[n.ID] = n
	}
	fanIn := map[string][]edge{}
	for _, e := range d.Edges {
		if e.isExec() {
			fanIn[e.Target] = append(fanIn[e.Target], e)
		}
	}
	var targets []string
	for t, in := range fanIn {
		if len(in) > 1 {
			targets = append(targets, t)
		}
	}
	slices.Sort(targets)
	lowered := map[string]bool{}
	for _, t := range targets {
		if byID[t] != nil { // a missing target is reported by edge validation
			lowered[t] = true
		}
	}
	if len(lowered) == 0 {
		return nil
	}
	// dataIn indexes the data edges into the pins of the targets.
	dataIn := map[[2]string][]int{}
	for i, e := range d.Edges {
		if !e.isExec() && lowered[e.Target] {
			k := [2]string{e.Target, e.TargetHandle}
			dataIn[k] = append(dataIn[k], i)
		}
	}
	var added []edge
	for _, t := range targets {
		if !lowered[t] {
			continue
		}
		tn := byID[t]
		routes, err := c.routesOf(tn, fanIn[t], byID)
		if err != nil {
			return err
		}
		if added, err = c.insertJoin(d, byID, tn, routes, dataIn, added); err != nil {
			return err
		}
	}
	edges := make([]edge, 0, len(d.Edges)+len(added))
	for _, e := range d.Edges {
		if !(e.isExec() && lowered[e.Target]) {
			edges = append(edges, e)
		}
	}
	d.Edges = append(edges, added...)
	return nil
}

// routesOf returns the routes of a multi-entry target, from entryRoutes
// or derived from its incoming exec edges in edge order.
func (c *compiler) routesOf(t *rawNode, in []edge, byID map[string]*rawNode) ([]route, error) {
	seen := map[[2]string]bool{}
	for _, e := range in {
		k := [2]string{e.Source, e.SourceHandle}
		if seen[k] {
			return nil, c.errorf(t.ID, "exec-in", "duplicate incoming exec edge from %s.%s", e.Source, e.SourceHandle)
		}
		seen[k] = true
	}
	var routes []route
	// Saved routes without a usable source are skipped, as the reference
	// does; when none is left the routes come from the exec edges.
	list, _ := t.Data["entryRoutes"].([]any)
	for _, raw := range list {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		src := str(m["sourceNodeId"])
		if src == "" {
			src = str(m["source"])
		}
		if src == "" {
			continue
		}
		h := str(m["sourceHandle"])
		if h == "" {
			h = "exec-out"
		}
		key := str(m["key"])
		if key == "" {
			key = src + "::" + h
		}
		routes = append(routes, route{Key: key, Source: src, Handle: h})
	}
	if len(routes) > 0 {
		declared := map[[2]string]bool{}
		for _, r := range routes {
			declared[[2]string{r.Source, r.Handle}] = true
		}
		if len(declared) != len(seen) || !allIn(seen, declared) {
			return nil, c.errorf(t.ID, "exec-in", "entryRoutes mismatch: the saved routes %s do not match the incoming exec edges %s (stale metadata; re-save the flow)", routeList(routes), edgeList(in))
		}
	} else {
		for _, e := range in {
			routes = append(routes, route{Key: e.Source + "::" + e.SourceHandle, Source: e.Source, Handle: e.SourceHandle})
		}
	}
	keys := map[string]bool{}
	for _, r := range routes {
		if keys[r.Key] {
			return nil, c.errorf(t.ID, "exec-in", "duplicate entry route key %q", r.Key)
		}
		keys[r.Key] = true
		if byID[r.Source] == nil {
			return nil, c.errorf(t.ID, "exec-in", "entry route %q references missing source node %q", r.Key, r.Source)
		}
	}
	return routes, nil
}

func allIn(a, b map[[2]string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func routeList(rs []route) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Source+"."+r.Handle)
	}
	return fmt.Sprint(s)
}

func edgeList(es []edge) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Source+"."+e.SourceHandle)
	}
	return fmt.Sprint(s)
}

// insertJoin rewires the exec fan-in of t through a join_exec node and
// lowers its inputRouteOverrides into path_mux nodes. It appends the new
// nodes to d.Nodes and returns added with the new edges appended (lower
// drops the old exec edges into t); dataIn indexes d.Edges by target pin.
func (c *compiler) insertJoin(d *document, byID map[string]*rawNode, t *rawNode, routes []route,
	dataIn map[[2]string][]int, added []edge) ([]edge, error) {
	joinID := joinPrefix + t.ID
	if byID[joinID] != nil {
		return added, c.errorf(t.ID, "", "generated node id %q collides with an existing node", joinID)
	}
	join := &rawNode{
		ID: joinID, Type: "join_exec", Data: map[string]any{"_internal": true},
		Inputs:  []pin{{"exec-in", "execution"}},
		Outputs: []pin{{"exec-out", "execution"}, {"which", "number"}, {"from", "string"}, {"from_handle", "string"}},
	}
	c.joinRoutes[joinID] = routes
	d.Nodes = append(d.Nodes, join)
	byID[joinID] = join
	for _, r := range routes {
		added = append(added, edge{r.Source, r.Handle, joinID, "exec-in"})
	}
	added = append(added, edge{joinID, "exec-out", t.ID, "exec-in"})

	overrides := routeOverrides(t)
	routeIndex := map[string]int{}
	for i, r := range routes {
		routeIndex[r.Key] = i
	}
	var err error
	for _, pinID := range slices.Sorted(maps.Keys(overrides)) {
		added, err = c.insertMux(d, byID, t, pinID, overrides[pinID], routeIndex, len(routes), dataIn[[2]string{t.ID, pinID}], added)
		if err != nil {
			return added, err
		}
	}
	return added, nil
}

// routeRef is the source of one input route override.
type routeRef struct{ source, handle string }

// routeOverrides returns the usable inputRouteOverrides of t, by pin and
// (trimmed) route key. As the reference's _parse_input_route_overrides
// does, it drops a per-route value that is not an object, a ref without
// both a source node and a handle, and a pin left with no ref: stale
// editor metadata (an emptied override) must not wire the pin to a mux,
// which would make it connected and so no longer filled from the bus.
func routeOverrides(t *rawNode) map[string]map[string]routeRef {
	raw, _ := t.Data["inputRouteOverrides"].(map[string]any)
	out := map[string]map[string]routeRef{}
	for pinID, v := range raw {
		perRoute, ok := v.(map[string]any)
		if pinID == "" || !ok {
			continue
		}
		refs := map[string]routeRef{}
		// Sorted, so that keys equal once trimmed resolve the same way
		// on every compile.
		for _, key := range slices.Sorted(maps.Keys(perRoute)) {
			m, ok := perRoute[key].(map[string]any)
			if !ok || str(key) == "" {
				continue
			}
			src := str(m["sourceNodeId"])
			if src == "" {
				src = str(m["source"])
			}
			h := str(m["sourceHandle"])
			if h == "" {
				h = str(m["handle"])
			}
			if src == "" || h == "" {
				continue
			}
			refs[str(key)] = routeRef{src, h}
		}
		if len(refs) > 0 {
			out[pinID] = refs
		}
	}
	return out
}

// insertMux lowers the overrides of one input pin of t (§3.1 step 4):
// wired lists the indexes in d.Edges of the data edges into the pin, the
// one of which is rewired in place to the mux; the new edges are
// appended to added.
func (c *compiler) insertMux(d *document, byID map[string]*rawNode, t *rawNode, pinID string, perRoute map[string]routeRef,
	routeIndex map[string]int, nRoutes int, wired []int, added []edge) ([]edge, error) {
	muxID := muxPrefix + t.ID + "__" + pinID
	if byID[muxID] != nil {
		return added, c.errorf(t.ID, pinID, "generated node id %q collides with an existing node", muxID)
	}
	inputs := []pin{{"select", "number"}}
	for i := range nRoutes {
		inputs = append(inputs, pin{"in" + strconv.Itoa(i), "any"})
	}
	inputs = append(inputs, pin{"fallback", "any"})
	mux := &rawNode{ID: muxID, Type: "path_mux", Data: map[string]any{"_internal": true},
		Inputs: inputs, Outputs: []pin{{"out", "any"}}}
	if len(wired) > 1 {
		return added, c.errorf(t.ID, pinID, "multiple data edges target an overridden input pin")
	}
	if len(wired) == 1 {
		d.Edges[wired[0]].Target, d.Edges[wired[0]].TargetHandle = muxID, "fallback"
	} else if pd, _ := t.Data["pinDefaults"].(map[string]any); pd != nil {
		if v, ok := pd[pinID]; ok {
			mux.Data["pinDefaults"] = map[string]any{"fallback": v}
		}
	}
	added = append(added, edge{joinPrefix + t.ID, "which", muxID, "select"})
	for _, key := range slices.Sorted(maps.Keys(perRoute)) {
		idx, ok := routeIndex[key]
		if !ok {
			return added, c.errorf(t.ID, pinID, "inputRouteOverrides references unknown route key %q", key)
		}
		ref := perRoute[key]
		if byID[ref.source] == nil {
			return added, c.errorf(t.ID, pinID, "inputRouteOverrides route %q references missing source node %q", key, ref.source)
		}
		added = append(added, edge{ref.source, ref.handle, muxID, "in" + strconv.Itoa(idx)})
	}
	added = append(added, edge{muxID, "out", t.ID, pinID})
	d.Nodes = append(d.Nodes, mux)
	byID[muxID] = mux
	return added, nil
}
