package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// VARS_QUERY: reads a value of the run's vars (or of another run's) and
// answers with a tool-style envelope whose output is the JSON text of
// {"path", "type", "value"} (type is the Python type name).
func handleVarsQuery(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	pathV, ok := p["path"]
	if !ok || pathV == nil {
		pathV = p["var_path"]
	}
	path := pyval.Strip(pyStrOrEmpty(pathV))
	if path == "" {
		path = "scratchpad"
	}
	callID := pyStrOr(p["call_id"], "vars")
	name := pyStrOr(p["tool_name"], "inspect_vars")
	vars := req.Run.Vars
	if target := targetRunID(p["target_run_id"]); target != "" && target != req.Run.RunID {
		other, err := loadOtherRun(ctx, req.Runtime, target)
		if errors.Is(err, store.ErrNotFound) {
			return Completed(toolResult(callID, name, false, nil, "Unknown target_run_id: "+target)), nil
		}
		if err != nil {
			// Not an answer about the run: the effect fails (and may be
			// retried), as Python's raises.
			return Outcome{}, fmt.Errorf("vars_query: reading run %s: %w", target, err)
		}
		vars = other.Vars // a copy: its namespaces are added for this read only
	}
	EnsureNamespaces(vars)
	// The run's own live vars are not checked yet (the next commit does):
	// a cycle a node left would overflow the walks below. Refused here,
	// the commit after this step fails the run naming its path.
	if err := pyjson.CheckMember(vars, "vars", 1); err != nil {
		return Completed(toolResult(callID, name, false, nil, err.Error())), nil
	}
	if !pyjson.IsNormalized(vars) {
		// A node's typed values ([]string, map[string]string) read as a
		// read of the run gives them, as after any checkpoint.
		if n, err := pyjson.NormalizeObject(vars); err == nil {
			vars = n
		}
	}
	v, err := ResolvePath(vars, path)
	if err != nil {
		return Completed(toolResult(callID, name, false, nil, err.Error())), nil
	}
	out := map[string]any{"path": path, "type": pyval.TypeName(v)}
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
	// Python's json.dumps of the value json.loads read: a number another
	// writer spelt its own way (1e-7, 1.50) is written as Python writes it.
	text, err := pyjson.Marshal(out, pyjson.Style{SortKeys: true, Indent: 2, PyNumbers: true})
	if err != nil {
		return Completed(toolResult(callID, name, false, nil, err.Error())), nil
	}
	return Completed(toolResult(callID, name, true, string(text), "")), nil
}

// targetRunID reads VARS_QUERY's target_run_id as Python does,
// str(v).strip() or None for any v but None: 0 and false name the runs "0"
// and "False", not the calling run. "" means none.
func targetRunID(v any) string {
	if v == nil {
		return ""
	}
	return pyval.Strip(pyval.Str(v))
}

// pyStrOr is Python's str(v or def): a number is its text, untrimmed.
func pyStrOr(v any, def string) string {
	if !truthy(v) {
		return def
	}
	return pyval.Str(v)
}

// pyStrOrEmpty is Python's str(v or "").
func pyStrOrEmpty(v any) string { return pyStrOr(v, "") }

// pathToken is one step of a vars path: a key, or a list index when index
// is set (text is then the index as Python's int() reads it: ASCII, no
// leading zeros, of any size).
type pathToken struct {
	text  string
	index bool
}

// parsePath splits a vars path as Python's parse_vars_path does: JSON
// pointer form (/a/0/c, ~1 and ~0 unescaped) or dot form with [i]
// indices (a.b[0].c); empty segments are skipped. A bare or pointer
// segment is an index when str.isdigit() holds for it, a bracketed one
// when it is decimal digits (the regex \[(\d+)\]); both count every
// Unicode decimal digit. An isdigit() segment int() refuses ('²') is
// Python's ValueError.
func parsePath(path string) ([]pathToken, error) {
	var toks []pathToken
	if strings.HasPrefix(path, "/") {
		for _, part := range strings.Split(path, "/") {
			if part == "" {
				continue
			}
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			tok, err := segmentToken(part)
			if err != nil {
				return nil, err
			}
			toks = append(toks, tok)
		}
		return toks, nil
	}
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			continue
		}
		if !strings.Contains(part, "[") && pyIsDigit(part) {
			tok, err := segmentToken(part)
			if err != nil {
				return nil, err
			}
			toks = append(toks, tok)
			continue
		}
		// Runs of characters other than brackets are keys; "[digits]" is
		// an index; anything else (a stray bracket) is skipped.
		for part != "" {
			if i := strings.IndexAny(part, "[]"); i != 0 {
				if i < 0 {
					i = len(part)
				}
				toks = append(toks, pathToken{text: part[:i]})
				part = part[i:]
				continue
			}
			if part[0] == '[' {
				if j := strings.IndexByte(part, ']'); j > 1 && pyIsDecimal(part[1:j]) {
					tok, err := segmentToken(part[1:j])
					if err != nil {
						return nil, err
					}
					toks = append(toks, tok)
					part = part[j+1:]
					continue
				}
			}
			part = part[1:]
		}
	}
	return toks, nil
}

// segmentToken is Python's `int(part) if part.isdigit() else part`.
func segmentToken(part string) (pathToken, error) {
	if !pyIsDigit(part) {
		return pathToken{text: part}, nil
	}
	n, ok := pyval.ParseBigInt(part)
	if !ok {
		return pathToken{}, fmt.Errorf("invalid literal for int() with base 10: %s", pyval.Repr(part))
	}
	return pathToken{text: n.String(), index: true}, nil
}

// pyIsDecimal is Python's str.isdecimal() (and what the regex \d+ matches
// whole): non-empty, every rune a Unicode decimal digit (Nd). int() reads
// every such string.
func pyIsDecimal(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// pyIsDigit is Python's str.isdigit(): non-empty, every rune a decimal
// digit or a digit-only numeral (pyDigitOnly), which int() refuses.
func pyIsDigit(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) && !unicode.Is(pyDigitOnly, r) {
			return false
		}
	}
	return s != ""
}

// pyDigitOnly holds the characters of Unicode Numeric_Type=Digit that are
// not decimal digits: superscripts, subscripts, circled and parenthesised
// digits and the like (listed from Python's unicodedata: c.isdigit() and
// not c.isdecimal()).
var pyDigitOnly = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00b2, Hi: 0x00b3, Stride: 1},
		{Lo: 0x00b9, Hi: 0x00b9, Stride: 1},
		{Lo: 0x1369, Hi: 0x1371, Stride: 1},
		{Lo: 0x19da, Hi: 0x19da, Stride: 1},
		{Lo: 0x2070, Hi: 0x2070, Stride: 1},
		{Lo: 0x2074, Hi: 0x2079, Stride: 1},
		{Lo: 0x2080, Hi: 0x2089, Stride: 1},
		{Lo: 0x2460, Hi: 0x2468, Stride: 1},
		{Lo: 0x2474, Hi: 0x247c, Stride: 1},
		{Lo: 0x2488, Hi: 0x2490, Stride: 1},
		{Lo: 0x24ea, Hi: 0x24ea, Stride: 1},
		{Lo: 0x24f5, Hi: 0x24fd, Stride: 1},
		{Lo: 0x24ff, Hi: 0x24ff, Stride: 1},
		{Lo: 0x2776, Hi: 0x277e, Stride: 1},
		{Lo: 0x2780, Hi: 0x2788, Stride: 1},
		{Lo: 0x278a, Hi: 0x2792, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x10a40, Hi: 0x10a43, Stride: 1},
		{Lo: 0x10e60, Hi: 0x10e68, Stride: 1},
		{Lo: 0x11052, Hi: 0x1105a, Stride: 1},
		{Lo: 0x1f100, Hi: 0x1f10a, Stride: 1},
	},
	LatinOffset: 2,
}

// ResolvePath reads a path of vars (see parsePath), with Python's
// resolve_vars_path errors: "Missing key 'x' at a.b", "Index 3 out of
// range at a (len=2)", "Expected object at a but found list", "Expected
// list at a but found dict"; the top level is "(root)".
func ResolvePath(root map[string]any, path string) (any, error) {
	var cur any = root
	var walked []string
	at := func() string {
		if len(walked) == 0 {
			return "(root)"
		}
		return strings.Join(walked, ".")
	}
	toks, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	for _, tok := range toks {
		if tok.index {
			list, ok := cur.([]any)
			if !ok {
				return nil, fmt.Errorf("Expected list at %s but found %s", at(), pyval.TypeName(cur))
			}
			i, err := strconv.Atoi(tok.text)
			if err != nil || i >= len(list) {
				return nil, fmt.Errorf("Index %s out of range at %s (len=%d)", tok.text, at(), len(list))
			}
			cur = list[i]
			walked = append(walked, strconv.Itoa(i))
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Expected object at %s but found %s", at(), pyval.TypeName(cur))
		}
		v, ok := obj[tok.text]
		if !ok {
			return nil, fmt.Errorf("Missing key '%s' at %s", tok.text, at())
		}
		cur = v
		if tok.text != "" {
			walked = append(walked, tok.text)
		}
	}
	return cur, nil
}
