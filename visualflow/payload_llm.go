package visualflow

import (
	"fmt"
	"maps"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

const providerModelError = "Provider and model must both be set, or both left blank for Gateway/Core defaults"

// llmCallPayload builds the llm_call payload (§5.4.1). Memory-source pins
// (§5.4.3) only contribute params.include_session_attachments_index; the
// recall pre-effects are not issued (documented in docs/visualflow.md).
func (s *step) llmCallPayload(n *node, in, cfg map[string]any) (map[string]any, error) {
	p := map[string]any{}
	prompt := ""
	if v := in["prompt"]; v != nil {
		prompt = pyval.Str(v)
	}
	p["prompt"] = prompt
	// input.get("system", ""): a pin connected to null is sent as null.
	system := getOr(in, "system", "")
	p["system_prompt"] = system
	var tools any
	if v, ok := in["tools"]; ok {
		tools = v
	} else {
		tools = cfg["tools"]
	}
	p["tools"] = s.toolSpecs(tools)

	params := map[string]any{}
	temp := 0.7
	if f, ok := floatOK(cfg["temperature"]); ok {
		temp = f
	}
	if f, ok := floatOK(in["temperature"]); ok {
		temp = f
	}
	params["temperature"] = temp
	rawSeed, ok := in["seed"]
	if !ok {
		rawSeed = cfg["seed"]
	}
	if seed, ok := strictIntOK(rawSeed); ok && seed >= 0 {
		params["seed"] = seed
	}
	// A present thinking pin wins even when null or blank (no thinking):
	// the config is the default only when the input has no such key.
	rawThinking, ok := in["thinking"]
	if !ok {
		rawThinking = cfg["thinking"]
	}
	if th, ok := thinkingValue(rawThinking); ok {
		params["thinking"] = th
	}
	if i, ok := llmTokenLimit(in, cfg, "max_out_tokens", "max_output_tokens", "maxOutputTokens"); ok {
		params["max_output_tokens"] = i
	}
	// llm_call has no config default for the binding, hence the nil cfg.
	if b := promptCacheBinding(in, nil); b != nil {
		params["prompt_cache_binding"] = b
	}
	mem := memorySettings(in)
	if b, ok := mem["use_session_attachments"].(bool); ok {
		params["include_session_attachments_index"] = b
	}
	p["params"] = params
	// The memory settings ride on the payload as top-level keys, as the
	// reference passes them through for its pre-call scheduling.
	maps.Copy(p, mem)

	include := false
	if v, ok := first(in, "include_context", "use_context"); ok {
		include = pyval.CoerceBool(v)
	} else if v := firstNonNull(cfg, "include_context", "use_context"); v != nil {
		// The config side is get-then-get-if-None: a null include_context
		// falls back to use_context.
		include = pyval.CoerceBool(v)
	}
	p["include_context"] = include
	// The output request is taken by key presence, as in Python: a null
	// output pin is sent as null (a plain text call) rather than falling
	// back to the config's request.
	if v, ok := first(in, "output", "outputs"); ok {
		p["output"] = v
	} else if v, ok := first(cfg, "output", "outputs"); ok {
		p["output"] = v
	}
	rawSchema, _ := first(in, "resp_schema", "response_schema")
	if schema := normalizeSchema(rawSchema); schema != nil {
		if err := semanticsRefError(schema); err != nil {
			return nil, err
		}
		p["response_schema"] = schema
		p["response_schema_name"] = "LLM_StructuredOutput"
		if pyval.CoerceBool(cfg["structured_output_fallback"]) {
			p["structured_output_fallback"] = true
		}
	}
	provider := stringPin(in, cfg, "provider", "provider_text")
	model := stringPin(in, cfg, "model", "model_text")
	if provider == "" || model == "" {
		if provider != "" || model != "" {
			s.warn(fmt.Sprintf("#FALLBACK llm_call '%s': %s", n.ID, providerModelError))
		}
		return p, nil
	}
	p["provider"], p["model"] = provider, model
	if i, ok := llmTokenLimit(in, cfg, "max_in_tokens", "max_input_tokens", "maxInputTokens"); ok {
		p["max_input_tokens"] = i
	}
	if ctx, ok := in["context"].(map[string]any); ok {
		applyExplicitContext(p, ctx, prompt, system)
	}
	return p, nil
}

// stringPin is an llm_call setting (§5.4.1): the first pin alias holding
// a string, even a blank one, else the config value; trimmed. A blank pin
// thus overrides the node's configuration and leaves the setting to the
// host defaults, as Python's isinstance(..., str) test does.
func stringPin(in, cfg map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := in[k].(string); ok {
			return pyval.Strip(s)
		}
	}
	return configString(cfg, keys...)
}

// nonBlankPin is an agent setting (§5.6): the first pin alias holding a
// non-blank string, else the config value; trimmed.
func nonBlankPin(in, cfg map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := trimmed(in[k]); s != "" {
			return s
		}
	}
	return configString(cfg, keys...)
}

// configString is the first config alias holding a non-blank string,
// trimmed.
func configString(cfg map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := trimmed(cfg[k]); s != "" {
			return s
		}
	}
	return ""
}

// cleanAttachments is what a context's attachments pass on (as media or
// to a child): objects copied, strings stripped and kept when not blank,
// anything else dropped. It never returns nil.
func cleanAttachments(att []any) []any {
	out := []any{}
	for _, a := range att {
		switch x := a.(type) {
		case map[string]any:
			out = append(out, pyval.DeepCopy(x))
		case string:
			if t := pyval.Strip(x); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// applyExplicitContext honours the context pin when provider and model
// are both set (§5.4.1).
func applyExplicitContext(p, ctx map[string]any, prompt string, system any) {
	if att, ok := ctx["attachments"].([]any); ok {
		p["media"] = cleanAttachments(att)
	}
	msgs, _ := ctx["messages"].([]any)
	var objs []any
	for _, m := range msgs {
		if o, ok := m.(map[string]any); ok {
			objs = append(objs, pyval.DeepCopy(o))
		}
	}
	if len(objs) == 0 {
		return
	}
	sysText, _ := system.(string) // a system prompt that is not a string is left out
	p["messages"] = withSystemAndPrompt(objs, sysText, prompt)
	delete(p, "prompt")
	delete(p, "system_prompt")
}

// withSystemAndPrompt inserts the system prompt, stripped, after the
// leading system messages and appends the user prompt.
func withSystemAndPrompt(msgs []any, system, prompt string) []any {
	system = pyval.Strip(system)
	i := 0
	for i < len(msgs) {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != "system" {
			break
		}
		i++
	}
	out := append([]any{}, msgs[:i]...)
	if system != "" {
		out = append(out, map[string]any{"role": "system", "content": system})
	}
	out = append(out, msgs[i:]...)
	return append(out, map[string]any{"role": "user", "content": prompt})
}

// injectContext is the pre-call context injection of §5.4.2.
func (s *step) injectContext(p map[string]any) {
	if p["include_context"] != true {
		return
	}
	ctx, _ := s.vars["context"].(map[string]any)
	if _, has := p["messages"]; !has {
		view := activeContext(ctx, s.vars)
		// Python reads `system_prompt or system` and inserts it only when
		// it is a string.
		system, _ := pyval.GetOr(p, "system_prompt", "system").(string)
		prompt := pyval.Str(orDefault(p["prompt"], ""))
		p["messages"] = withSystemAndPrompt(view, system, prompt)
		delete(p, "prompt")
		delete(p, "system_prompt")
		delete(p, "system")
	}
	if _, has := p["media"]; !has {
		att, _ := ctx["attachments"].([]any)
		if media := cleanAttachments(att); len(media) > 0 {
			p["media"] = media
		}
	}
}

// activeContext returns the active context view: system messages, then
// the last max_history_messages non-system messages.
func activeContext(ctx map[string]any, vars map[string]any) []any {
	msgs, _ := ctx["messages"].([]any)
	var sys, rest []any
	for _, m := range msgs {
		o, ok := m.(map[string]any)
		if !ok {
			continue
		}
		if o["role"] == "system" {
			sys = append(sys, pyval.DeepCopy(o))
		} else {
			rest = append(rest, pyval.DeepCopy(o))
		}
	}
	// Python's int(limits.get("max_history_messages", -1)), any failure
	// meaning -1 (no limit): "1.5" is no limit and true is 1.
	limits, _ := vars["_limits"].(map[string]any)
	if n, err := pyval.ToInt(limits["max_history_messages"]); err == nil && n >= 0 && n < int64(len(rest)) {
		rest = rest[int64(len(rest))-n:]
	}
	return append(sys, rest...)
}

// memoryBoolKeys and memoryValueKeys are the memory-source settings of
// llm_call and agent (§5.4.3).
var (
	memoryBoolKeys  = []string{"use_session_attachments", "use_span_memory", "use_semantic_search", "use_kg_memory"}
	memoryValueKeys = []string{"memory_query", "memory_scope", "recall_level", "max_span_messages", "kg_max_input_tokens", "kg_limit", "kg_min_score"}
)

// memorySettings expands the memory settings of llm_call and agent
// (§5.4.3) as the reference's input handlers do: a present pin wins, even
// when null, else the memory object's non-null value; the use_* switches
// are coerced booleans (Appendix B, so a null or unreadable value is
// false) and the other settings are taken verbatim.
func memorySettings(in map[string]any) map[string]any {
	out := map[string]any{}
	mem, _ := in["memory"].(map[string]any)
	for _, keys := range [][]string{memoryBoolKeys, memoryValueKeys} {
		for _, k := range keys {
			v, ok := in[k]
			if !ok {
				if v, ok = mem[k]; !ok || v == nil {
					continue
				}
			}
			if keys[0] == memoryBoolKeys[0] {
				out[k] = pyval.CoerceBool(v)
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// useSessionAttachments reads the use_session_attachments memory setting
// (§5.4.3) of llm_call and agent; ok is false when it is not set (the
// runtime default then applies).
func useSessionAttachments(in map[string]any) (value, ok bool) {
	value, ok = memorySettings(in)["use_session_attachments"].(bool)
	return value, ok
}

// toolSpecs turns the tools value into ToolSpecs. As the reference's
// _normalize_tools, the list is read as ToolSpec objects only when every
// entry is an object; otherwise it is read as tool names and any object
// in it is dropped, so a mixed list sends the same tools as in Python.
func (s *step) toolSpecs(v any) []any {
	out := []any{}
	list, _ := v.([]any)
	if len(list) > 0 && allObjects(list) {
		for _, t := range list {
			if spec, ok := strippedToolSpec(t.(map[string]any)); ok {
				out = append(out, spec)
			}
		}
		return out
	}
	for _, t := range list {
		x, _ := t.(string)
		name := pyval.Strip(x)
		if name == "" {
			continue
		}
		if s.p.opts.ToolSpec == nil {
			out = append(out, map[string]any{"name": name})
		} else if spec, ok := s.p.opts.ToolSpec(name); ok {
			out = append(out, spec)
		}
	}
	return out
}

// allObjects reports whether every entry of list is an object.
func allObjects(list []any) bool {
	for _, t := range list {
		if _, ok := t.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// strippedToolSpec reduces a ToolSpec object to {name, description,
// parameters} (§5.4.1) as the reference's _strip_tool_spec does, so a
// provider never receives a nameless tool or null parameters: entries
// without a non-blank string name are dropped (ok false), the name is
// stripped, the description is str(desc or "") and parameters an object.
func strippedToolSpec(x map[string]any) (map[string]any, bool) {
	name, _ := x["name"].(string)
	if name = pyval.Strip(name); name == "" {
		return nil, false
	}
	params := map[string]any{}
	if p, isObj := x["parameters"].(map[string]any); isObj {
		maps.Copy(params, p)
	}
	return map[string]any{"name": name, "description": pyval.StrOrEmpty(x["description"]), "parameters": params}, true
}

// normalizeSchema unwraps {type:"json_schema", json_schema:{schema}}; an
// empty schema is none. As the reference's _normalize_response_schema, a
// wrapper whose json_schema has no schema object is none too, never sent
// as if it were the JSON Schema itself.
func normalizeSchema(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	if js, ok := m["json_schema"].(map[string]any); ok && m["type"] == "json_schema" {
		m, _ = js["schema"].(map[string]any)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// semanticsRefError refuses a response schema that is an
// `abstractsemantics:` $ref: the reference resolves it with the
// abstractsemantics package and raises when it cannot (no silent
// fallback to an unconstrained answer); this runtime has no resolver.
func semanticsRefError(schema map[string]any) error {
	if ref, _ := schema["$ref"].(string); strings.HasPrefix(pyval.Strip(ref), "abstractsemantics:") {
		return fmt.Errorf("response schema %q needs a semantics resolver, which this runtime does not have", ref)
	}
	return nil
}

// thinkingValue accepts a bool or a non-empty trimmed string.
func thinkingValue(v any) (any, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		if t := pyval.Strip(x); t != "" {
			return t, true
		}
	}
	return nil, false
}

// positiveInt accepts positive integers (numeric strings too).
func positiveInt(v any) (int64, bool) {
	i, ok := intOK(v)
	return i, ok && i > 0
}

// llmTokenLimit reads an llm_call token limit as the reference does: the
// value of the first of the three pin aliases present in the inputs or,
// when that is null or absent, the config value (key, else camelKey). It
// counts only when int() accepts it and it is positive: "1000.0" gives no
// limit, and an invalid pin value does not fall back to the config.
func llmTokenLimit(in, cfg map[string]any, pinAlias, key, camelKey string) (int64, bool) {
	raw, _ := first(in, pinAlias, key, camelKey)
	if raw == nil {
		raw = firstNonNull(cfg, key, camelKey)
	}
	i, ok := strictIntOK(raw)
	return i, ok && i > 0
}

// strictIntOK is Python's int(x) for llm_call settings (no bools, no
// "7.5"-style strings), unlike intOK's int(float(x)) used by the media
// nodes.
func strictIntOK(v any) (int64, bool) {
	if v == nil {
		return 0, false
	}
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	i, err := pyval.ToInt(v)
	return i, err == nil
}
