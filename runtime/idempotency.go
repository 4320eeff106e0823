package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// PythonIdempotencyKey is the Python 0.4.28 key of an effect: the first
// 32 hex characters of sha256 over the ASCII-escaped canonical JSON of
// {run_id, node_id, effect_type, effect_payload}. It has no step counter,
// so a loop repeating an identical effect would reuse the first result;
// the kernel uses EffectKey instead.
func PythonIdempotencyKey(runID, nodeID string, e *durable.Effect) string {
	return keyOf(pyjson.Ordered{
		{Key: "effect_payload", Value: normalizePayload(e)},
		{Key: "effect_type", Value: string(e.Type)},
		{Key: "node_id", Value: nodeID},
		{Key: "run_id", Value: runID},
	})
}

// EffectKey is the idempotency key the kernel records: the Python key
// material plus effect_seq, the number of effects the run had committed
// before this one. Retries of one effect share the key; a later identical
// effect (a loop) gets a new one; a replay after a crash, which restarts
// from the same checkpoint, computes the same key: a completed result is
// reused, an attempt the crash interrupted is made again under it.
func EffectKey(runID, nodeID string, e *durable.Effect, seq int64) string {
	return keyOf(pyjson.Ordered{
		{Key: "effect_payload", Value: normalizePayload(e)},
		{Key: "effect_seq", Value: seq},
		{Key: "effect_type", Value: string(e.Type)},
		{Key: "node_id", Value: nodeID},
		{Key: "run_id", Value: runID},
	})
}

func keyOf(material pyjson.Ordered) string {
	b, err := pyjson.Append(make([]byte, 0, 256), material, pyjson.CanonicalASCII, "effect")
	if err != nil {
		// Payloads are checked before execution; a failure here means a
		// value the encoder refuses, which cannot dedupe anyway.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

var toolCallIDKeys = []string{"call_id", "id", "runtime_call_id", "model_call_id", "idempotency_key"}

// normalizePayload drops the volatile parts of a TOOL_CALLS payload (call
// ids, argument encoding, allowlist order) so equal requests hash equal.
func normalizePayload(e *durable.Effect) map[string]any {
	p := e.Payload
	if p == nil {
		return map[string]any{}
	}
	if e.Type != durable.EffectToolCalls {
		return p // encoded alike whatever Go types hold it
	}
	if !pyjson.IsNormalizedObject(p) {
		// Typed containers ([]map[string]any, []string) as a read gives
		// them, so that the calls and the allowlist are recognised below.
		if n, err := pyjson.NormalizeObject(p); err == nil {
			p = n
		}
	}
	out := make(map[string]any, len(p))
	for k, v := range p {
		out[k] = v
	}
	if calls, ok := p["tool_calls"].([]any); ok {
		norm := make([]any, len(calls))
		for i, c := range calls {
			if m, ok := c.(map[string]any); ok {
				norm[i] = normalizeToolCall(m)
			} else {
				norm[i] = c
			}
		}
		out["tool_calls"] = norm
	}
	if allowed, ok := p["allowed_tools"].([]any); ok {
		out["allowed_tools"] = canonicalAllowed(allowed)
	}
	return out
}

func normalizeToolCall(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(toolCallIDKeys, k) {
			out[k] = v
		}
	}
	if name, ok := out["name"].(string); ok {
		out["name"] = pyval.Strip(name)
	}
	out["arguments"] = normalizeArguments(out["arguments"]) // absent or null too: {}
	if fn, ok := out["function"].(map[string]any); ok {
		out["function"] = normalizeToolCall(fn)
	}
	return out
}

func normalizeArguments(v any) any {
	switch a := v.(type) {
	case map[string]any:
		return a
	case string:
		if obj, err := pyjson.DecodeObject([]byte(pyval.Strip(a))); err == nil {
			return obj
		}
	}
	return map[string]any{}
}

// canonicalAllowed trims, drops empties, dedupes and sorts an allowlist.
func canonicalAllowed(list []any) []any {
	var names []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			if s = pyval.Strip(s); s != "" && !slices.Contains(names, s) {
				names = append(names, s)
			}
		}
	}
	slices.Sort(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}
