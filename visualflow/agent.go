package visualflow

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// ReactWorkflowID returns the ReAct child workflow id of an agent node:
// agentConfig._react_workflow_id when set (bundles set it), else
// visual_react_agent_<flow>_<node> (§5.6).
func (n *node) reactWorkflowID(flowID string) string {
	if cfg, ok := n.Data["agentConfig"].(map[string]any); ok {
		if id := str(cfg["_react_workflow_id"]); id != "" {
			return id
		}
	}
	return bundle.ReactWorkflowID(flowID, n.ID)
}

var defaultModelAliases = map[string]bool{"default": true, "__default__": true, "__abstractcore_default__": true, "abstractcore.default": true}

// runAgent is the agent state machine (§5.6): init → subworkflow (the
// ReAct child run) → structured (optional llm_call) → done. Memory-source
// pre-effects are not issued (documented).
func (s *step) runAgent(n *node) (runtime.StepPlan, error) {
	buckets := objectAt(s.tmp, "agent")
	b, _ := buckets[n.ID].(map[string]any)
	if b == nil || b["phase"] == "done" {
		b = map[string]any{"phase": "init"}
		buckets[n.ID] = b
		if ms, ok := s.tmp["memory_sources"].(map[string]any); ok {
			delete(ms, n.ID)
		}
	}
	switch b["phase"] {
	case "subworkflow":
		return s.agentAfterChild(n, b)
	case "structured":
		return s.agentAfterStructured(n, b)
	}
	return s.agentInit(n, b)
}

func agentConfig(n *node) map[string]any {
	cfg, _ := n.Data["agentConfig"].(map[string]any)
	if cfg == nil {
		return map[string]any{}
	}
	return cfg
}

// agentInputs is the agent's resolved_inputs as Python's agent input
// normaliser builds them: task, context, provider and model (the pin
// strings, else null), system and tools always, the optional overrides
// only when their pin is present. The bucket stores this shape so a run
// saved by either runtime continues in the other; every phase resolves the
// settings from it and agentConfig (agentSettings). thinking,
// provider_text and model_text are passed through too, which Python's
// handler also reads when present. A response schema naming an
// `abstractsemantics:` ref is an error, as in Python's normaliser.
func agentInputs(in, cfg map[string]any) (map[string]any, error) {
	task := ""
	if v := in["prompt"]; v != nil {
		task = pyval.Str(v)
	}
	ctx, _ := in["context"].(map[string]any)
	if ctx == nil {
		ctx = map[string]any{}
	}
	system := ""
	if s, ok := in["system"].(string); ok {
		system = s
	} else if pyval.Truthy(in["system"]) {
		system = pyval.Str(in["system"])
	}
	tools := agentToolNames(cfg["tools"])
	if v, ok := in["tools"]; ok {
		tools = agentToolNames(v)
	}
	stringOrNull := func(v any) any {
		if s, ok := v.(string); ok {
			return s
		}
		return nil
	}
	out := map[string]any{"task": task, "context": pyval.DeepCopy(ctx), "provider": stringOrNull(in["provider"]),
		"model": stringOrNull(in["model"]), "system": system, "tools": tools}
	for _, k := range []string{"max_iterations", "temperature", "seed", "thinking", "provider_text", "model_text"} {
		if v, ok := in[k]; ok {
			out[k] = pyval.DeepCopy(v)
		}
	}
	if v, ok := first(in, "max_in_tokens", "max_input_tokens", "maxInputTokens"); ok {
		out["max_input_tokens"] = v
	}
	if v, ok := first(in, "max_out_tokens", "max_output_tokens", "maxOutputTokens"); ok {
		out["max_output_tokens"] = v
	}
	if _, ok := in["prompt_cache_binding"]; ok {
		if b := promptCacheBinding(in, nil); b != nil {
			out["prompt_cache_binding"] = b
		}
	}
	if v, ok := first(in, "resp_schema", "response_schema"); ok {
		if schema := normalizeSchema(v); len(schema) > 0 {
			if err := semanticsRefError(schema); err != nil {
				return nil, err
			}
			out["response_schema"] = schema
		}
	}
	if v, ok := first(in, "include_context", "use_context"); ok {
		out["include_context"] = pyval.CoerceBool(v)
	}
	// The memory settings (§5.4.3) are kept as Python's normaliser keeps
	// them: the use_* switches coerced, the others verbatim.
	maps.Copy(out, memorySettings(in))
	return out, nil
}

// agentSettings are the agent's settings (§5.6 "pin value else
// agentConfig value"), resolved at every phase from the bucket's
// resolved_inputs as Python's handler does.
type agentSettings struct {
	task, system, provider, model, reactID string
	context                                map[string]any
	tools                                  []any
	include                                bool
	schema                                 map[string]any
	temp                                   float64
	seed                                   int64
	thinking, cacheBinding                 any
}

func (s *step) agentSettings(n *node, ri map[string]any) agentSettings {
	cfg := agentConfig(n)
	st := agentSettings{reactID: n.reactWorkflowID(s.p.flowID), temp: 0.7, seed: -1}
	if v := pyval.GetOr(ri, "task", "prompt"); pyval.Truthy(v) { // str(task or prompt or "")
		st.task = pyval.Str(v)
	}
	st.context, _ = ri["context"].(map[string]any)
	if st.context == nil {
		// Runs saved by earlier versions kept the child context here.
		st.context, _ = ri["context_extra"].(map[string]any)
	}
	if v := ri["system"]; v != nil {
		st.system = pyval.Str(v)
	}
	provider, defProvider := settingString(ri, cfg, "provider", "provider_text")
	provider = strings.ToLower(provider)
	model, defModel := settingString(ri, cfg, "model", "model_text")
	// A default marker asks for the defaults, so using them is no fallback
	// worth a warning (Python: explicit_default).
	explicitDefault := defProvider || defModel
	if provider == "" || model == "" {
		rt, _ := s.vars["_runtime"].(map[string]any)
		fallbackProv := strings.ToLower(trimmed(rt["provider"]))
		usedFallback := false
		if provider == "" && fallbackProv != "" {
			provider, usedFallback = fallbackProv, true
		}
		if model == "" && provider == fallbackProv && trimmed(rt["model"]) != "" {
			model, usedFallback = trimmed(rt["model"]), true
		}
		// Warned whenever a runtime default was taken, even if the other
		// half stays missing and the node then reports its configuration
		// error (Python: used_fallback).
		if usedFallback && !explicitDefault {
			s.warn("#FALLBACK: missing provider/model; using runtime defaults")
		}
	}
	st.provider, st.model = provider, model
	if v, ok := ri["tools"]; ok {
		st.tools = agentToolNames(v)
	} else {
		st.tools = agentToolNames(cfg["tools"])
	}
	// The pins go by key presence; the config checkbox is get-then-get-if-
	// None, so a null include_context falls back to use_context. Python
	// reads the checkbox with bool(), not the coercion the pin had: a
	// string "false" there is true.
	if v, ok := first(ri, "include_context", "use_context"); ok {
		st.include = pyval.CoerceBool(v)
	} else if v := firstNonNull(cfg, "include_context", "use_context"); v != nil {
		st.include = pyval.Truthy(v)
	}
	st.schema = normalizeSchema(firstNonNull(ri, "resp_schema", "response_schema"))
	if st.schema == nil {
		if os, ok := cfg["outputSchema"].(map[string]any); ok && pyval.Truthy(os["enabled"]) {
			st.schema, _ = os["jsonSchema"].(map[string]any)
		}
	}
	// As the seed: a pin that is set is used, and an unreadable one
	// gives the default 0.7; only a null pin falls back to agentConfig.
	temp := firstNonNull(ri, "temperature")
	if temp == nil {
		temp = cfg["temperature"]
	}
	if f, ok := floatOK(temp); ok {
		st.temp = f
	}
	// The seed is Python's int(value), not int(float(value)): "7.5" gives
	// no seed. A pin that is set is used even when unreadable; only a null
	// pin falls back to agentConfig (documented).
	seed := firstNonNull(ri, "seed")
	if seed == nil {
		seed = cfg["seed"]
	}
	if i, ok := strictIntOK(seed); ok {
		st.seed = i
	}
	if th, ok := thinkingValue(firstNonNull(ri, "thinking")); ok {
		st.thinking = th
	} else if th, ok := thinkingValue(cfg["thinking"]); ok {
		st.thinking = th
	}
	st.cacheBinding = promptCacheBinding(ri, cfg)
	return st
}

func (s *step) agentInit(n *node, b map[string]any) (runtime.StepPlan, error) {
	in, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		in = map[string]any{}
	}
	cfg := agentConfig(n)
	ri, err := agentInputs(in, cfg)
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("agent node '%s': %w", n.ID, err)
	}
	b["resolved_inputs"] = ri
	set := s.agentSettings(n, ri)
	task, provider, model := set.task, set.provider, set.model
	ctxPin := set.context
	if ctxPin == nil {
		ctxPin = map[string]any{}
	}
	if provider == "" || model == "" {
		msg := "Agent node missing provider/model configuration"
		s.setFlowError(n.ID, msg)
		const response = "Agent configuration error: missing provider/model"
		prov, mod := orDefault(nullable(provider), "unknown"), orDefault(nullable(model), "unknown")
		out := agentOutputs(response, false, agentMeta(prov, mod, "", 0, 0),
			map[string]any{"node_id": n.ID, "steps": []any{}, "tool_calls": []any{}, "tool_results": []any{}}, []any{}, []any{})
		// The reference stores this error object as the node's outcome, so
		// the outputKey var and the legacy result pin carry it and a flow
		// can detect the misconfiguration from them.
		outcome := map[string]any{"response": response, "task": task, "context": pyval.DeepCopy(ctxPin),
			"success": false, "error": "missing provider/model", "provider": prov, "model": mod}
		return s.agentDone(n, b, out, outcome), nil
	}
	// Child vars (§5.6).
	limits := map[string]any{"max_iterations": int64(50), "current_iteration": int64(0), "max_tokens": int64(32768),
		"max_output_tokens": nil, "max_input_tokens": nil, "max_history_messages": int64(-1),
		"estimated_tokens_used": int64(0), "warn_iterations_pct": int64(80), "warn_tokens_pct": int64(80)}
	if pl, ok := s.vars["_limits"].(map[string]any); ok {
		for k, v := range pl {
			limits[k] = pyval.DeepCopy(v)
		}
	}
	if i, ok := positiveInt(firstNonNull(ri, "max_iterations")); ok {
		limits["max_iterations"] = i
	} else if i, ok := positiveInt(cfg["max_iterations"]); ok {
		limits["max_iterations"] = i
	}
	if i, ok := positiveInt(firstNonNull(ri, "max_input_tokens")); ok {
		limits["max_input_tokens"] = i
	} else if i, ok := positiveInt(firstNonNull(cfg, "max_input_tokens", "maxInputTokens")); ok {
		limits["max_input_tokens"] = i
	}
	if i, ok := positiveInt(firstNonNull(ri, "max_output_tokens")); ok {
		limits["max_output_tokens"] = i
	} else if i, ok := positiveInt(firstNonNull(cfg, "max_output_tokens", "maxOutputTokens")); ok {
		limits["max_output_tokens"] = i
	}
	childCtx := map[string]any{}
	for k, v := range ctxPin {
		if k != "task" && k != "messages" {
			childCtx[k] = pyval.DeepCopy(v)
		}
	}
	rt, _ := s.vars["_runtime"].(map[string]any)
	var msgs []any
	if set.include {
		pctx, _ := s.vars["context"].(map[string]any)
		msgs = activeContext(pctx, s.vars)
		att, _ := pctx["attachments"].([]any)
		if kept := cleanAttachments(att); len(kept) > 0 {
			if _, has := childCtx["attachments"]; !has {
				childCtx["attachments"] = kept
			}
		}
	}
	// The pin's messages replace the inherited history only when some of
	// its entries are message objects; other entries are dropped.
	if list, ok := ctxPin["messages"].([]any); ok {
		if pm := objectList(list); len(pm) > 0 {
			msgs, _ = pyval.DeepCopy(pm).([]any)
		}
	}
	if msgs == nil {
		msgs = []any{}
	}
	childCtx["task"], childCtx["messages"] = task, msgs
	crt := map[string]any{"inbox": []any{}, "provider": provider, "model": model, "allowed_tools": set.tools}
	// Media input policy: only non-blank strings are inherited, and an
	// absent or null stt_language falls back to audio_language.
	if ap := pyStripped(rt["audio_policy"]); ap != "" {
		crt["audio_policy"] = ap
	}
	lang := rt["stt_language"]
	if lang == nil {
		lang = rt["audio_language"]
	}
	if l := pyStripped(lang); l != "" {
		crt["stt_language"] = l
	}
	// The node's own thinking, else the parent's, normalised alike: a bool
	// or a non-blank stripped string, otherwise no override.
	if set.thinking != nil {
		crt["thinking"] = set.thinking
	} else if th, ok := thinkingValue(rt["thinking"]); ok {
		crt["thinking"] = th
	}
	if set.temp != 0.7 {
		crt["temperature"] = set.temp
	}
	if set.seed >= 0 {
		crt["seed"] = set.seed
	}
	if pyval.Strip(set.system) != "" { // a blank system pin adds nothing
		crt["system_prompt_extra"] = set.system
	}
	if set.cacheBinding != nil {
		crt["prompt_cache_binding"] = set.cacheBinding
	}
	// The child's LLM calls read this run-level override; without it the
	// runtime indexes session attachments for tool-using agents.
	if b, ok := useSessionAttachments(ri); ok {
		crt["control"] = map[string]any{"include_session_attachments_index": b}
	}
	// The scratchpad budget is int(max_iterations or 25): a parent limit
	// of 0 or null still gives the loop a budget.
	maxIt := int64(25)
	if v := limits["max_iterations"]; pyval.Truthy(v) {
		i, err := pyval.ToInt(v)
		if err != nil {
			return runtime.StepPlan{}, fmt.Errorf("node %s (agent): _limits.max_iterations: %w", n.ID, err)
		}
		maxIt = i
	}
	childVars := map[string]any{
		"_limits": limits, "context": childCtx, "_temp": map[string]any{}, "_runtime": crt,
		"scratchpad": map[string]any{"iteration": int64(0), "max_iterations": maxIt},
	}
	b["phase"] = "subworkflow"
	s.setOutput(n.ID, map[string]any{"status": "running", "task": task, "context": pyval.DeepCopy(ctxPin),
		"response": "", "success": nil, "meta": nil, "scratchpad": nil})
	// Exactly the reference's payload: the agent builds its effects itself,
	// without the generic wrapper's "type" and "resume_to_node" keys (the
	// resume target is the plan's next node, this node).
	payload := map[string]any{"workflow_id": set.reactID, "vars": childVars, "async": true, "wait": true, "include_traces": true}
	eff := &durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "_temp.agent." + n.ID + ".sub"}
	return runtime.Request(eff, n.ID), nil
}

// settingString is the first pin alias holding a non-blank string, else
// agentConfig, trimmed. A default marker gives "" and isDefault: the
// caller uses the defaults without a fallback warning.
func settingString(in, cfg map[string]any, keys ...string) (v string, isDefault bool) {
	v = nonBlankPin(in, cfg, keys...)
	if defaultModelAliases[strings.ToLower(v)] {
		return "", true
	}
	return v, false
}

// promptCacheBinding is the agent's prompt_cache_binding: the pin when the
// inputs have the key, else agentConfig's; a non-empty object is kept, a
// string is stripped and kept when not blank, anything else is dropped
// (Python's agent handler), so the child and the structured pass get the
// same value.
func promptCacheBinding(in, cfg map[string]any) any {
	v, ok := in["prompt_cache_binding"]
	if !ok {
		v = cfg["prompt_cache_binding"]
	}
	switch b := v.(type) {
	case map[string]any:
		if len(b) > 0 {
			return pyval.DeepCopy(b)
		}
	case string:
		if t := pyval.Strip(b); t != "" {
			return t
		}
	}
	return nil
}

// agentToolNames is the agent's allowed tools as Python's agent input
// normaliser reads them: a list's (or a single value's) non-blank strings,
// stripped, in order, without repeats; null gives none.
func agentToolNames(v any) []any {
	if v == nil {
		return []any{}
	}
	if _, isList := v.([]any); !isList {
		v = []any{v}
	}
	return uniqueStrings(v)
}

// uniqueStrings is a list's non-blank strings, stripped, in order, without
// repeats; anything but a list gives none (as the reference's host reads
// agentConfig.tools when it registers the ReAct workflows).
func uniqueStrings(v any) []any {
	out := []any{}
	seen := map[string]bool{}
	list, _ := v.([]any)
	for _, x := range list {
		if s := trimmed(x); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// agentMeta is the agent's meta output; mode "" leaves output_mode out (the
// configuration error's meta has none).
func agentMeta(provider, model any, mode string, calls, results int) map[string]any {
	m := map[string]any{"schema": "abstractcode.agent.v1.meta", "version": int64(1),
		"provider": provider, "model": model, "tool_calls": int64(calls), "tool_results": int64(results)}
	if mode != "" {
		m["output_mode"] = mode
	}
	return m
}

func agentOutputs(response any, success bool, meta, scratchpad map[string]any, calls, results []any) map[string]any {
	return map[string]any{"response": response, "success": success, "meta": meta, "scratchpad": scratchpad,
		"tool_calls": calls, "tool_results": results}
}

// agentAfterChild processes the ReAct child's output. It keeps in the
// bucket what the pins are rebuilt from (§5.6): scratchpad, answer,
// messages, success, provider, model, iterations, sub_run_id and
// output_mode, as Python's handler does.
func (s *step) agentAfterChild(n *node, b map[string]any) (runtime.StepPlan, error) {
	ri, _ := b["resolved_inputs"].(map[string]any)
	sub, _ := b["sub"].(map[string]any)
	if sub == nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (agent): resumed without the ReAct child's result", n.ID)
	}
	set := s.agentSettings(n, ri)
	output, _ := sub["output"].(map[string]any)
	task := set.task
	// Python: str(output.answer or ""). A failed child resumes the parent
	// with {success:false, error}: the agent still succeeds with an empty
	// answer, and the failure stays on the child run (meta.sub_run_id).
	answer := ""
	if a := output["answer"]; pyval.Truthy(a) {
		answer = pyval.Str(a)
	}
	var messages []any
	if list, ok := output["messages"].([]any); ok {
		messages = []any{}
		for _, m := range list {
			if o, ok := m.(map[string]any); ok {
				messages = append(messages, o)
			} else {
				messages = append(messages, map[string]any{"role": "assistant", "content": pyval.Str(m)})
			}
		}
	} else {
		messages = []any{}
		if pyval.Strip(task) != "" {
			messages = append(messages, map[string]any{"role": "user", "content": task})
		}
		if pyval.Strip(answer) != "" {
			messages = append(messages, map[string]any{"role": "assistant", "content": answer})
		}
	}
	subRunID, _ := sub["sub_run_id"].(string)
	traces, _ := sub["node_traces"].(map[string]any)
	steps := flattenSteps(traces)
	scratch := map[string]any{"sub_run_id": nullable(subRunID), "workflow_id": set.reactID, "task": task,
		"messages": messages, "node_traces": orDefault(traces, map[string]any{}), "steps": steps}
	extra := map[string]any{}
	for k, v := range set.context {
		if k != "task" && k != "messages" {
			extra[k] = pyval.DeepCopy(v)
		}
	}
	if len(extra) > 0 {
		scratch["context_extra"] = extra
	}
	b["scratchpad"], b["messages"], b["answer"], b["success"] = scratch, messages, answer, true
	b["provider"], b["model"], b["output_mode"] = set.provider, set.model, "unstructured"
	iterations := output["iterations"]
	if iterations != nil {
		b["iterations"] = iterations
	}
	if subRunID != "" {
		b["sub_run_id"] = subRunID
	}
	calls, results := agentToolActivity(steps)
	scratchOut := copyObject(scratch)
	scratchOut["tool_calls"], scratchOut["tool_results"] = calls, results
	meta := agentMeta(set.provider, set.model, "unstructured", len(calls), len(results))
	if subRunID != "" {
		meta["sub_run_id"] = subRunID
	}
	if iterations != nil {
		meta["iterations"] = iterations
	}
	if set.include {
		s.appendAgentTurn(n, b, sub, task, answer, calls, results)
	}
	if len(set.schema) > 0 {
		b["phase"] = "structured"
		prompt := "Convert the Agent answer into a JSON object matching the required schema. Return JSON only.\n\nTask:\n" + task + "\n\nAnswer:\n" + answer
		params := map[string]any{"temperature": set.temp}
		if set.seed >= 0 {
			params["seed"] = set.seed
		}
		if set.thinking != nil {
			params["thinking"] = set.thinking
		}
		if set.cacheBinding != nil {
			params["prompt_cache_binding"] = set.cacheBinding
		}
		payload := map[string]any{
			"messages":      []any{map[string]any{"role": "user", "content": prompt}},
			"system_prompt": set.system, "provider": set.provider, "model": set.model,
			"response_schema": set.schema, "response_schema_name": "Agent_" + n.ID, "params": params,
		}
		eff := &durable.Effect{Type: durable.EffectLLMCall, Payload: payload, ResultKey: "_temp.agent." + n.ID + ".structured"}
		return runtime.Request(eff, n.ID), nil
	}
	out := agentOutputs(answer, true, meta, scratchOut, calls, results)
	return s.agentDone(n, b, out, map[string]any{"success": true}), nil
}

// agentToolActivity is the tool calls and results of the child's steps.
func agentToolActivity(steps []any) (calls, results []any) {
	calls, results = []any{}, []any{}
	for _, st := range steps {
		sm, _ := st.(map[string]any)
		eff, _ := sm["effect"].(map[string]any)
		if eff["type"] != "tool_calls" {
			continue
		}
		if p, ok := eff["payload"].(map[string]any); ok {
			calls = append(calls, objectList(p["tool_calls"])...)
		}
		if r, ok := sm["result"].(map[string]any); ok {
			results = append(results, objectList(r["results"])...)
		}
	}
	return calls, results
}

// agentAfterStructured finishes a structured-output agent from the bucket,
// as Python's phase "structured": its meta has no iterations (the pins
// get them back from the bucket, see agentDone).
func (s *step) agentAfterStructured(n *node, b map[string]any) (runtime.StepPlan, error) {
	ri, _ := b["resolved_inputs"].(map[string]any)
	set := s.agentSettings(n, ri)
	res, _ := b["structured"].(map[string]any)
	// The content is parsed only when data is absent or null; a data (or
	// parsed content) that is not an object gives {}.
	raw := res["data"]
	if c, isStr := res["content"].(string); raw == nil && isStr && pyval.Strip(c) != "" {
		raw, _ = pyval.LoadsJSON(c)
	}
	data, _ := raw.(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	scratch, _ := b["scratchpad"].(map[string]any)
	if scratch == nil {
		scratch = map[string]any{"node_id": n.ID, "steps": []any{}}
	}
	steps, _ := scratch["steps"].([]any)
	calls, results := agentToolActivity(steps)
	scratchOut := copyObject(scratch)
	if _, ok := scratchOut["messages"]; !ok {
		if msgs, ok := b["messages"].([]any); ok {
			scratchOut["messages"] = slices.Clone(msgs)
		}
	}
	scratchOut["tool_calls"], scratchOut["tool_results"] = calls, results
	meta := agentMeta(set.provider, set.model, "structured", len(calls), len(results))
	if sr := pyStripped(scratchOut["sub_run_id"]); sr != "" {
		meta["sub_run_id"] = sr
	}
	text, _ := pyval.Dumps(data, pyval.Compact)
	out := agentOutputs(text, true, meta, scratchOut, calls, results)
	out["data"] = data
	b["output_mode"] = "structured"
	return s.agentDone(n, b, out, data), nil
}

// agentDone stores the outputs, sets the bus and continues.
func (s *step) agentDone(n *node, b map[string]any, out map[string]any, effect any) runtime.StepPlan {
	b["phase"] = "done"
	if _, ok := b["success"]; !ok {
		b["success"] = out["success"]
	}
	if effect != nil {
		objectAt(s.tmp, "effects")[n.ID] = effect
	}
	pins := agentPins(b, out, effect, s.nodeTrace(n.ID))
	if n.referenced["result"] {
		// The legacy pin: the raw result when it says more than success,
		// else the four main outputs.
		var result any
		if raw, ok := effect.(map[string]any); ok && hasKeyBesides(raw, "success") {
			result = pyval.DeepCopy(raw)
		} else {
			result = map[string]any{"response": pins["response"], "success": pins["success"],
				"meta": pins["meta"], "scratchpad": pins["scratchpad"]}
		}
		out["result"], pins["result"] = result, result
	}
	s.setOutput(n.ID, pins)
	s.setBus(out)
	s.setHandle("exec-out")
	if n.linear != "" {
		return runtime.Next(n.linear)
	}
	final := map[string]any{"response": out["response"], "success": out["success"], "meta": out["meta"], "scratchpad": out["scratchpad"]}
	if d, ok := out["data"]; ok {
		final["data"] = d
	}
	return runtime.Complete(final)
}

// agentPins is the agent's pins as Python rebuilds them at every later
// step from the bucket and the outcome raw (_sync_effect_results_to_node_outputs):
// the answer stripped, the bucket's iterations, and raw's success,
// provider, model, iterations and sub_run_id overriding the handler's.
// For a structured agent raw is the data, so a schema with a `success`
// field sets the success pin. Without a bucket scratchpad (the
// configuration error) the scratchpad pin is the node's trace when it has
// one (Python's get_node_trace; a loop's earlier pass leaves one), and a scratchpad without a messages list gets the
// bucket's messages, else raw.context.messages, else the minimal
// transcript (raw.task stripped, then the response). The bus and a
// terminal completion keep the handler's outputs, as the reference's do.
func agentPins(b, out map[string]any, effect any, trace map[string]any) map[string]any {
	pins := copyObject(out)
	if r, ok := out["response"].(string); ok {
		pins["response"] = pyval.Strip(r)
	}
	raw, _ := effect.(map[string]any)
	if b["scratchpad"] == nil && trace != nil {
		base, _ := pyval.DeepCopy(trace).(map[string]any)
		steps, _ := base["steps"].([]any)
		calls, results := agentToolActivity(steps)
		base["tool_calls"], base["tool_results"] = calls, results
		pins["scratchpad"], pins["tool_calls"], pins["tool_results"] = base, calls, results
	}
	if sp, ok := pins["scratchpad"].(map[string]any); ok {
		if _, isList := sp["messages"].([]any); !isList {
			sp = copyObject(sp)
			sp["messages"] = agentPinMessages(b, raw, pyStripped(pins["response"]))
			pins["scratchpad"] = sp
		}
	}
	meta, _ := out["meta"].(map[string]any)
	if meta == nil {
		return pins
	}
	meta = copyObject(meta)
	if v, has := b["iterations"]; has {
		if it, ok := intOK(v); ok {
			meta["iterations"] = it
		} else {
			delete(meta, "iterations")
		}
	}
	if raw != nil {
		for _, k := range []string{"provider", "model", "sub_run_id"} {
			if v := pyStripped(raw[k]); v != "" {
				meta[k] = v
			}
		}
		if it, ok := intOK(raw["iterations"]); ok {
			meta["iterations"] = it
		}
		if v, ok := raw["success"]; ok {
			pins["success"] = pyval.Truthy(v)
		}
	}
	pins["meta"] = meta
	return pins
}

// agentPinMessages is the scratchpad pin's messages when the scratchpad
// has none (Python's sync): the bucket's messages, else raw's
// context.messages (non-objects as assistant text), else the task and the
// response as a minimal transcript.
func agentPinMessages(b, raw map[string]any, response string) []any {
	normalize := func(v any) []any {
		list, _ := v.([]any)
		out := []any{}
		for _, m := range list {
			if o, ok := m.(map[string]any); ok {
				out = append(out, copyObject(o))
			} else {
				out = append(out, map[string]any{"role": "assistant", "content": pyval.Str(m)})
			}
		}
		return out
	}
	msgs := normalize(b["messages"])
	if len(msgs) == 0 && raw != nil {
		ctx, _ := raw["context"].(map[string]any)
		msgs = normalize(ctx["messages"])
	}
	if len(msgs) == 0 {
		if task := pyStripped(raw["task"]); task != "" {
			msgs = append(msgs, map[string]any{"role": "user", "content": task})
		}
		if response != "" {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": response})
		}
	}
	return msgs
}

// nodeTrace is the node's trace in vars._runtime.node_traces, nil if none.
func (s *step) nodeTrace(nodeID string) map[string]any {
	rt, _ := s.vars["_runtime"].(map[string]any)
	traces, _ := rt["node_traces"].(map[string]any)
	t, _ := traces[nodeID].(map[string]any)
	return t
}

// appendAgentTurn appends the agent turn to the parent context as
// Python's handler does (phase "subworkflow"): the task as a user message,
// a compact transcript of the child's tool results (so an outer loop
// re-invoking the agent sees the evidence and does not repeat the calls),
// then the answer. Each message's metadata names the node and the child run
// (sub_run_id only when known), which hosts use to attribute and filter
// turns; message ids agent:<sub run, else this run>:<node>:<suffix> keep
// each message once. The bucket's context_appended_sub_run_id (Python's
// key) marks the sub run as appended; a child result without a string
// sub_run_id appends nothing, as in Python (None == the absent marker).
func (s *step) appendAgentTurn(n *node, b, sub map[string]any, task, answer string, calls, results []any) {
	subID, isStr := sub["sub_run_id"].(string)
	var subRun any
	if isStr {
		subRun = subID
	}
	if b["context_appended_sub_run_id"] == subRun {
		return
	}
	ctx := objectAt(s.vars, "context")
	msgs, _ := ctx["messages"].([]any)
	owner := subID
	if owner == "" {
		owner = s.run.RunID
	}
	prefix := "agent:" + owner + ":" + n.ID + ":"
	has := func(id string) bool {
		for _, m := range msgs {
			if o, ok := m.(map[string]any); ok {
				if md, ok := o["metadata"].(map[string]any); ok && md["message_id"] == id {
					return true
				}
			}
		}
		return false
	}
	add := func(role, text, suffix string) {
		if text = pyval.Strip(text); text == "" || has(prefix+suffix) {
			return
		}
		md := map[string]any{"kind": "agent_turn", "node_id": n.ID, "message_id": prefix + suffix}
		if subID != "" {
			md["sub_run_id"] = subID
		}
		msgs = append(msgs, map[string]any{"role": role, "content": text, "metadata": md})
	}
	add("user", task, "task")
	for _, o := range agentToolObservations(n.ID, prefix, subID, calls, results) {
		if md := o["metadata"].(map[string]any); !has(md["message_id"].(string)) {
			msgs = append(msgs, o)
		}
	}
	add("assistant", answer, "answer")
	if msgs == nil {
		msgs = []any{}
	}
	ctx["messages"] = msgs
	b["context_appended_sub_run_id"] = subID
}

// maxToolObservations is how many tool results the parent context gets
// per agent turn (Python's max_results); the rest are summarised.
const maxToolObservations = 20

// agentToolObservations renders the child's tool results as Python's
// _append_tool_observations: assistant messages (some OpenAI-compatible
// servers are strict about role "tool") "[<tool>]: <details>" or
// "[<tool>]: Error: <details>", details being an args=<sorted JSON> line
// when the matching call (by call_id) has arguments, then the output
// (pretty JSON for objects and lists) or, on failure, the error, truncated
// to 2000 characters; then a summary when more than 20 results. Message
// ids are idPrefix + tool:<call_id or index> (tool:omitted for the
// summary).
func agentToolObservations(nodeID, idPrefix, subID string, calls, results []any) []map[string]any {
	if len(results) == 0 {
		return nil
	}
	callByID := map[string]map[string]any{}
	for _, c := range calls {
		if cm, ok := c.(map[string]any); ok {
			if id := pyval.Strip(pyStrOr(cm["call_id"], "")); id != "" {
				callByID[id] = cm
			}
		}
	}
	var out []map[string]any
	for i, r := range results[:min(len(results), maxToolObservations)] {
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		name := pyval.Strip(pyStrOr(rm["name"], "tool"))
		if name == "" {
			name = "tool"
		}
		callID := pyval.Strip(pyStrOr(rm["call_id"], ""))
		success := pyval.Truthy(rm["success"])
		var args map[string]any
		if c, ok := callByID[callID]; ok && callID != "" {
			if a, ok := c["arguments"].(map[string]any); ok && len(a) > 0 {
				args = a
			}
		}
		rendered := pyStrOr(rm["output"], "")
		switch rm["output"].(type) {
		case map[string]any, []any:
			if js, err := pyval.Dumps(rm["output"], pyval.DumpOptions{Indent: 2}); err == nil {
				rendered = js
			}
		}
		rendered = pyval.Strip(rendered)
		details := rendered
		if !success {
			details = pyval.Strip(pyStrOr(rm["error"], rendered))
		}
		if args != nil {
			argsText, err := pyval.Dumps(args, pyval.Spaced)
			if err != nil {
				argsText = pyval.Str(args)
			}
			details = pyval.Strip("args=" + argsText + "\n" + details)
		}
		details = truncateObservation(details, 2000)
		content := "[" + name + "]: " + details
		if !success {
			content = "[" + name + "]: Error: " + details
		}
		suffix := "tool:" + callID
		if callID == "" {
			suffix = fmt.Sprintf("tool:%d", i)
		}
		md := map[string]any{"kind": "tool_observation", "node_id": nodeID, "message_id": idPrefix + suffix,
			"tool_name": name, "success": success}
		if callID != "" {
			md["call_id"] = callID
		}
		if subID != "" {
			md["sub_run_id"] = subID
		}
		out = append(out, map[string]any{"role": "assistant", "content": content, "metadata": md})
	}
	if omitted := len(results) - maxToolObservations; omitted > 0 {
		out = append(out, map[string]any{"role": "assistant",
			"content": fmt.Sprintf("[tools]: (omitted %d additional tool results for brevity; see sub_run_id=%s)", omitted, subID),
			"metadata": map[string]any{"kind": "tool_observation_summary", "node_id": nodeID,
				"message_id": idPrefix + "tool:omitted", "sub_run_id": subID}})
	}
	return out
}

// pyStrOr is str(v or def): def for a falsy v, else v's Python str.
func pyStrOr(v any, def string) string {
	if !pyval.Truthy(v) {
		return def
	}
	return pyval.Str(v)
}

// truncateObservation is Python's _truncate: text longer than maxChars
// characters keeps its head, right-stripped, and a
// "\n… (truncated, 12,345 chars total)" suffix, within maxChars.
func truncateObservation(text string, maxChars int) string {
	n := pyval.Len(text)
	if maxChars <= 0 || n <= maxChars {
		return text
	}
	total, _ := pyval.FormatValue(int64(n), ",")
	suffix := "\n… (truncated, " + total + " chars total)"
	keep := maxChars - pyval.Len(suffix)
	if keep < 200 {
		keep, suffix = maxChars, ""
	}
	end := int64(keep)
	return pyval.RStrip(pyval.Slice(text, 0, &end)) + suffix
}

// flattenSteps returns every node-trace step sorted by ts.
func flattenSteps(traces map[string]any) []any {
	var steps []any
	for _, k := range slices.Sorted(maps.Keys(traces)) {
		t, _ := traces[k].(map[string]any)
		l, _ := t["steps"].([]any)
		for _, step := range l {
			if m, ok := step.(map[string]any); ok {
				steps = append(steps, m)
			}
		}
	}
	// Python's sort key is str(ts or ""): a step without a time sorts first.
	tsKey := func(step any) string {
		ts := step.(map[string]any)["ts"]
		if !pyval.Truthy(ts) {
			return ""
		}
		return pyval.Str(ts)
	}
	sort.SliceStable(steps, func(i, j int) bool { return tsKey(steps[i]) < tsKey(steps[j]) })
	if steps == nil {
		steps = []any{}
	}
	return steps
}

// objectList is a value read as a list of objects: an object alone is a
// list of one, other items are dropped (tool activity of the agent).
func objectList(v any) []any {
	switch x := v.(type) {
	case map[string]any:
		return []any{x}
	case []any:
		var out []any
		for _, item := range x {
			if m, ok := item.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// pyStripped is a string value stripped as Python's str.strip does, ""
// for anything else.
func pyStripped(v any) string {
	s, _ := v.(string)
	return pyval.Strip(s)
}

// hasKeyBesides reports whether m has a key other than key.
func hasKeyBesides(m map[string]any, key string) bool {
	for k := range m {
		if k != key {
			return true
		}
	}
	return false
}
