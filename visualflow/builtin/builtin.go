// Package builtin implements the pure, builtin and literal node types of the
// VisualFlow catalogue (spec visualflow.md §4.5 and §6): logic, math,
// string, variable readers, data/object/array/JSON helpers, agent envelope
// builders, literals and the internal path_mux.
//
// A node is evaluated by the Func registered for its type. Funcs receive the
// node's resolved inputs (pin id → value; an absent pin is a missing key)
// plus an Env with the live run vars, the node's data object, a clock and a
// random source. They return either a scalar (fed to pins named "result" or
// "output") or an object keyed by output pin id, exactly like the Python
// builtins (§4.5 pull rule). Values follow Appendix B semantics via package
// pyval; inputs are normalised (json.Number → int64/float64) and deep-copied
// before evaluation, so a Func never mutates its caller's values.
//
// Exec-only writers (set_var, set_vars, set_var_property, the exec form of
// add_message), effects, LLM/agent/subflow nodes, files, and host-backed
// catalog nodes (provider_catalog, provider_models, model_catalog) are not
// implemented here.
package builtin

import (
	"math/big"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Env is what a pure node may see besides its inputs.
type Env struct {
	// Vars are the live run vars (read by get_var, get_context, bool_var,
	// var_decl); may be nil.
	Vars map[string]any
	// NodeID is the id of the node being evaluated.
	NodeID string
	// NodeType is the node's type.
	NodeType string
	// Data is the node's data object from the VisualFlow JSON (config such
	// as literalValue, concatConfig, breakConfig, pin lists); may be nil.
	Data map[string]any
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Zone is the host's time zone, which system_datetime reports the
	// clock's instant in; nil means time.Local.
	Zone *time.Location
	// Rand is the random source; nil means the math/rand/v2 global source.
	Rand *rand.Rand
	// ToolSpec is the host's tool catalogue (CompileOptions.ToolSpec):
	// tool name to its ToolSpec object. format_tool_results reads the
	// primary argument order from it; may be nil.
	ToolSpec func(name string) (map[string]any, bool)
}

func (e *Env) now() time.Time {
	if e == nil || e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Env) int64N(n int64) int64 {
	if e != nil && e.Rand != nil {
		return e.Rand.Int64N(n)
	}
	return rand.Int64N(n)
}

// bigIntN draws uniformly from [0, n), n > 0, for ranges past int64:
// rejection sampling on n.BitLen() random bits, so each try succeeds with
// probability above one half.
func (e *Env) bigIntN(n *big.Int) *big.Int {
	bits := n.BitLen()
	words := (bits + 63) / 64
	r, w := new(big.Int), new(big.Int)
	for {
		r.SetUint64(0)
		for range words {
			r.Lsh(r, 64).Or(r, w.SetUint64(e.uint64()))
		}
		r.Rsh(r, uint(words*64-bits))
		if r.Cmp(n) < 0 {
			return r
		}
	}
}

func (e *Env) uint64() uint64 {
	if e != nil && e.Rand != nil {
		return e.Rand.Uint64()
	}
	return rand.Uint64()
}

func (e *Env) float64() float64 {
	if e != nil && e.Rand != nil {
		return e.Rand.Float64()
	}
	return rand.Float64()
}

func (e *Env) data() map[string]any {
	if e == nil {
		return nil
	}
	return e.Data
}

// Func evaluates one pure node from its resolved inputs (pin id → value;
// absent pin = missing key). It returns the node's output: either a scalar
// (fed to pins named "result"/"output") or an object keyed by output pin
// id, exactly as the Python builtin returns it (spec §4.5 pull rule).
type Func func(env *Env, inputs map[string]any) (any, error)

// literalTypes are the node types whose output is {"value": literalValue}.
var literalTypes = map[string]bool{
	"literal_string":  true,
	"literal_number":  true,
	"literal_boolean": true,
	"literal_json":    true,
	"literal_array":   true,
	"json_schema":     true,
}

// IsLiteral reports whether nodeType is a literal node type (its value comes
// from data.literalValue and its output is {"value": v}).
func IsLiteral(nodeType string) bool {
	return literalTypes[nodeType]
}

// registry maps node types to their implementation.
var registry = map[string]Func{
	// Literals (§6.13).
	"literal_string": literalValue, "literal_number": literalValue, "literal_boolean": literalValue,
	"literal_json": literalValue, "literal_array": literalValue, "json_schema": literalValue,
	// Logic (§6.3).
	"compare": compareNode, "not": notNode, "and": andNode, "or": orNode, "coalesce": coalesceNode,
	// Math (§6.4).
	"add": addNode, "subtract": subtractNode, "multiply": multiplyNode, "divide": divideNode,
	"modulo": moduloNode, "power": powerNode, "abs": absNode, "round": roundNode,
	"random_int": randomIntNode, "random_float": randomFloatNode,
	// Strings (§6.5).
	"concat": concatNode, "split": splitNode, "join": joinNode, "format": formatNode,
	"string_template": stringTemplateNode, "uppercase": uppercaseNode, "lowercase": lowercaseNode,
	"trim": trimNode, "substring": substringNode, "length": lengthNode,
	"is_empty_string": isEmptyStringNode, "contains": containsNode, "replace": replaceNode,
	// Variable readers (§6.6).
	"get_var": getVarNode, "var_decl": varDeclNode, "bool_var": boolVarNode,
	"get_context": getContextNode, "add_message": addMessageNode,
	// Objects (§6.7).
	"get": getNode, "set": setNode, "merge": mergeNode, "make_object": makeObjectNode,
	"break_object": breakObjectNode, "edit_json_schema": editJSONSchemaNode,
	// Arrays (§6.7).
	"make_array": makeArrayNode, "array_concat": arrayConcatNode, "array_map": arrayMapNode,
	"array_filter": arrayFilterNode, "array_length": arrayLengthNode, "array_append": arrayAppendNode,
	"array_dedup": arrayDedupNode, "get_element": getElementNode,
	"get_random_element": getRandomElementNode, "has_tools": hasToolsNode,
	// JSON (§6.7).
	"parse_json": parseJSONNode, "stringify_json": stringifyJSONNode,
	// Agent envelopes and tools (§6.7, §6.9).
	"make_context": makeContextNode, "make_meta": makeMetaNode, "make_scratchpad": makeScratchpadNode,
	"format_tool_results": formatToolResultsNode, "agent_trace_report": agentTraceReportNode,
	"tool_parameters": toolParametersNode, "tools_allowlist": toolsAllowlistNode,
	// System and internal (§6.1, §6.12).
	"system_datetime": systemDatetimeNode, "path_mux": pathMuxNode,
}

// Lookup returns the implementation of nodeType. The returned Func
// normalises and deep-copies its inputs before evaluation.
func Lookup(nodeType string) (Func, bool) {
	fn, ok := registry[nodeType]
	if !ok {
		return nil, false
	}
	return func(env *Env, inputs map[string]any) (any, error) {
		in, _ := pyval.Normalize(inputs).(map[string]any)
		if in == nil {
			in = map[string]any{}
		}
		return fn(env, in)
	}, true
}

// Types returns the sorted list of node types implemented here.
func Types() []string {
	out := make([]string, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
