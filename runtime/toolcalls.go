package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// The kernel's own handling of TOOL_CALLS payloads (spec §2.3 step 5,
// §2.9): warnings about the calls' ids before the key is computed, and the
// runtime call ids after.

// toolCallID is a call's id as the model gave it: call_id, or id when
// call_id is absent or null, as Python's str() (0 is the id "0"), trimmed.
func toolCallID(call map[string]any) string {
	v, ok := call["call_id"]
	if !ok || v == nil {
		v = call["id"]
	}
	if v == nil {
		return ""
	}
	return pyval.Strip(pyval.Str(v))
}

// warnToolCallIDs adds to vars._flow_warnings (a list of unique strings)
// the calls without an id and the ids given to more than one call (the
// first five, in the order they repeat, as Python lists them).
func warnToolCallIDs(vars map[string]any, nodeID string, payload map[string]any) {
	calls, _ := payload["tool_calls"].([]any)
	missing := 0
	seen := map[string]int{}
	var dups []string
	for _, c := range calls {
		call, ok := c.(map[string]any)
		if !ok {
			continue
		}
		id := toolCallID(call)
		if id == "" {
			missing++
			continue
		}
		if seen[id]++; seen[id] == 2 {
			dups = append(dups, id)
		}
	}
	if missing > 0 {
		addFlowWarning(vars, fmt.Sprintf("#WARN: TOOL_CALLS missing call_id at node '%s' (count=%d)", nodeID, missing))
	}
	if len(dups) > 0 {
		dups = dups[:min(len(dups), 5)]
		addFlowWarning(vars, fmt.Sprintf("#WARN: TOOL_CALLS duplicate call_id at node '%s' (%s)", nodeID, strings.Join(dups, ", ")))
	}
}

// addFlowWarning appends w to vars._flow_warnings unless it is there.
func addFlowWarning(vars map[string]any, w string) {
	list, ok := vars["_flow_warnings"].([]any)
	if !ok {
		// A node's []string is kept, as a read gives it; a value that is
		// not JSON is left in place to fail the run at its commit naming
		// it, which a new list would erase.
		if list, ok = writableList(vars["_flow_warnings"]); !ok {
			return
		}
	}
	if slices.Contains(list, any(w)) {
		return
	}
	vars["_flow_warnings"] = append(slices.Clip(list), w)
}

// withRuntimeCallIDs returns a TOOL_CALLS effect whose calls carry runtime
// call ids (rtcall_<key>_<i+1>, an existing one kept), a trimmed call_id
// that falls back to it, a trimmed name, and a deduplicated, sorted
// allowed_tools; the authored effect is left as it was. The ids are stable
// across restarts because the key is.
func withRuntimeCallIDs(eff *durable.Effect, key string) *durable.Effect {
	calls, ok := eff.Payload["tool_calls"].([]any)
	if !ok {
		return eff
	}
	out := eff.Clone()
	rewritten := make([]any, len(calls))
	for i, c := range calls {
		call, ok := c.(map[string]any)
		if !ok {
			rewritten[i] = pyjson.Clone(c)
			continue
		}
		call = pyjson.CloneObject(call)
		// An id given (any value whose text is not blank) is kept as
		// given, as in Python; the call_id fallback is its trimmed text.
		var rt string
		if v := call["runtime_call_id"]; v != nil {
			rt = pyval.Strip(pyval.Str(v))
		}
		if rt == "" {
			rt = fmt.Sprintf("rtcall_%s_%d", key, i+1)
			call["runtime_call_id"] = rt
		}
		id := toolCallID(call)
		if id == "" {
			id = rt
		}
		call["call_id"] = id
		if name, ok := call["name"].(string); ok {
			call["name"] = pyval.Strip(name)
		}
		rewritten[i] = call
	}
	out.Payload["tool_calls"] = rewritten
	if allowed, ok := out.Payload["allowed_tools"].([]any); ok {
		out.Payload["allowed_tools"] = canonicalAllowed(allowed)
	}
	return out
}
