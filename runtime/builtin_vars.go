package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// VARS_QUERY: reads a value of the run's vars (or of another run's) and
// answers with a tool-style envelope whose output is the JSON text of
// {"path", "type", "value"} (type is the Python type name).
func handleVarsQuery(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	path := stringOr(p["path"], stringOr(p["var_path"], "scratchpad"))
	callID := stringOr(p["call_id"], "vars")
	name := stringOr(p["tool_name"], "inspect_vars")
	vars := req.Run.Vars
	if target, ok := p["target_run_id"].(string); ok && target != "" && target != req.Run.RunID {
		other, err := req.Runtime.store.RunGet(ctx, target)
		if err != nil {
			return Completed(toolResult(callID, name, false, nil, "Unknown target_run_id: "+target)), nil
		}
		vars = other.Vars
	}
	EnsureNamespaces(req.Run.Vars)
	v, err := ResolvePath(vars, path)
	if err != nil {
		return Completed(toolResult(callID, name, false, nil, err.Error())), nil
	}
	out := map[string]any{"path": path, "type": pythonType(v)}
	if truthy(p["keys_only"]) {
		switch x := v.(type) {
		case map[string]any:
			out["keys"] = toAny(pyjson.SortedKeys(x))
		case []any:
			out["length"] = int64(len(x))
		default:
			out["value"] = v
		}
	} else {
		out["value"] = v
	}
	text, err := pyjson.Marshal(out, pyjson.Style{SortKeys: true, Indent: 2})
	if err != nil {
		return Completed(toolResult(callID, name, false, nil, err.Error())), nil
	}
	return Completed(toolResult(callID, name, true, string(text), "")), nil
}

// ResolvePath reads a path of vars: dot form with [i] indices
// (scratchpad.a.b[0].c; bare numeric segments index lists) or a JSON
// pointer (/scratchpad/a/0/c).
func ResolvePath(root map[string]any, path string) (any, error) {
	var segs []string
	if strings.HasPrefix(path, "/") {
		for _, s := range strings.Split(path[1:], "/") {
			segs = append(segs, strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~"))
		}
	} else {
		for _, part := range strings.Split(path, ".") {
			for part != "" {
				i := strings.IndexByte(part, '[')
				if i < 0 {
					segs = append(segs, part)
					break
				}
				if i > 0 {
					segs = append(segs, part[:i])
				}
				j := strings.IndexByte(part[i:], ']')
				if j < 0 {
					return nil, fmt.Errorf("Invalid path: %s", path)
				}
				segs = append(segs, part[i+1:i+j])
				part = part[i+j+1:]
			}
		}
	}
	var cur any = root
	var walked []string
	at := func() string {
		if len(walked) == 0 {
			return "<root>"
		}
		return strings.Join(walked, ".")
	}
	for _, seg := range segs {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, fmt.Errorf("Missing key '%s' at %s", seg, at())
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				return nil, fmt.Errorf("Expected index at %s, got '%s'", at(), seg)
			}
			if i < 0 || i >= len(c) {
				return nil, fmt.Errorf("Index %d out of range at %s", i, at())
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("Expected object at %s", at())
		}
		walked = append(walked, seg)
	}
	return cur, nil
}

// pythonType names the Python type of a JSON value.
func pythonType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case float64:
		return "float"
	case int, int64:
		return "int"
	default:
		if n, ok := v.(interface{ String() string }); ok {
			s := n.String()
			if strings.ContainsAny(s, ".eE") || s == "NaN" || strings.HasSuffix(s, "Infinity") {
				return "float"
			}
			return "int"
		}
		return fmt.Sprintf("%T", v)
	}
}
