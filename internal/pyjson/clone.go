package pyjson

import (
	"maps"
	"reflect"
	"slices"
	"unsafe"
)

// Clone returns a deep copy of a generic JSON tree. Maps and slices are
// copied; scalars are shared (they are immutable). Values outside the
// generic tree are returned as they are, and so are containers nested past
// the decoder's limit: no document holds such a value, so sharing them is
// moot (a value read from a document is copied whole, even one deeper
// than the encoder writes). A value that contains itself is copied container by container,
// each once, so the copy has the same cycles (which the encoder refuses,
// naming the path) and shares no container with the original.
func Clone(v any) any {
	var c cloner
	out := c.value(v, 0)
	if c.cyclic {
		return cloneGraph(v)
	}
	return out
}

// CloneObject is Clone for an object; nil stays nil.
func CloneObject(m map[string]any) map[string]any {
	var c cloner
	out := c.object(m, 0)
	if c.cyclic {
		return cloneGraph(m).(map[string]any)
	}
	return out
}

// container identifies a map or a non-empty slice: a map by its pointer,
// a slice by its first element's address and its length (a prefix of a
// slice held by the slice is another value, not the slice itself).
// The encoder's cycle check keys containers the same way. An address
// compared while the walk holds the value cannot be reused by another.
type container struct {
	p uintptr
	n int // -1 for a map
}

func mapID(m map[string]any) container { return container{reflect.ValueOf(m).Pointer(), -1} }

func sliceID(a []any) container {
	return container{uintptr(unsafe.Pointer(unsafe.SliceData(a))), len(a)}
}

// shallowPath is how many containers of the copy path cloner scans
// linearly; deeper ones go to a set, so a legitimately deep value is not
// copied in quadratic time.
const shallowPath = 32

// cloner copies a tree, keeping the containers on the path from the root
// to the one being copied. A container met again on its own path is a
// cycle: copied branch by branch, a container held twice by itself would
// unfold into 2^maxDecodeDepth branches. The walk then stops (cyclic) and
// Clone starts over with cloneGraph.
type cloner struct {
	path   [shallowPath]container
	n      int
	deep   map[container]struct{} // path entries past shallowPath
	cyclic bool
}

// enter pushes id on the path, or reports false (and marks the walk
// cyclic) when it is there already.
func (c *cloner) enter(id container) bool {
	if slices.Contains(c.path[:min(c.n, shallowPath)], id) {
		c.cyclic = true
		return false
	}
	if c.n < shallowPath {
		c.path[c.n] = id
	} else {
		if _, ok := c.deep[id]; ok {
			c.cyclic = true
			return false
		}
		if c.deep == nil {
			c.deep = make(map[container]struct{})
		}
		c.deep[id] = struct{}{}
	}
	c.n++
	return true
}

func (c *cloner) leave(id container) {
	c.n--
	if c.n >= shallowPath {
		delete(c.deep, id)
	}
}

func (c *cloner) value(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		return c.object(x, depth)
	case []any:
		return c.array(x, depth)
	default:
		return v
	}
}

func (c *cloner) object(m map[string]any, depth int) map[string]any {
	if m == nil || depth > maxDecodeDepth || c.cyclic {
		return m
	}
	id := mapID(m)
	if !c.enter(id) {
		return m
	}
	defer c.leave(id)
	// maps.Clone copies the table wholesale, far cheaper than inserting
	// key by key; only nested containers are then replaced.
	out := maps.Clone(m)
	for k, e := range out {
		switch x := e.(type) {
		case map[string]any:
			out[k] = c.object(x, depth+1)
		case []any:
			out[k] = c.array(x, depth+1)
		}
	}
	return out
}

func (c *cloner) array(a []any, depth int) []any {
	if a == nil || depth > maxDecodeDepth || c.cyclic {
		return a
	}
	out := make([]any, len(a))
	if len(a) == 0 {
		return out
	}
	id := sliceID(a)
	if !c.enter(id) {
		return a
	}
	defer c.leave(id)
	for i, e := range a {
		switch x := e.(type) {
		case map[string]any:
			out[i] = c.object(x, depth+1)
		case []any:
			out[i] = c.array(x, depth+1)
		default:
			out[i] = e
		}
	}
	return out
}

// cloneGraph is Clone of a value that contains itself: each container is
// copied once, and every reference to it refers to that copy. It has no
// depth cut-off: a copy made past the limit and reused nearer the root
// would share the original's members there, and the memo already bounds
// the walk (each container once).
func cloneGraph(v any) any {
	g := graphCloner{copies: make(map[container]any)}
	return g.value(v)
}

type graphCloner struct {
	copies map[container]any
}

func (g *graphCloner) value(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		id := mapID(x)
		if c, ok := g.copies[id]; ok {
			return c
		}
		out := maps.Clone(x)
		g.copies[id] = out
		for k, e := range out {
			out[k] = g.value(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		if len(x) == 0 {
			return []any{}
		}
		id := sliceID(x)
		if c, ok := g.copies[id]; ok {
			return c
		}
		out := make([]any, len(x))
		g.copies[id] = out
		for i, e := range x {
			out[i] = g.value(e)
		}
		return out
	default:
		return v
	}
}
