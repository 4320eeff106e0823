package visualflow

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// runEffect is the generic effect-node step (§5.1): resolve inputs, build
// the payload, emit the effect with result key _temp.effects.<id>.
// Errors here fail the run (§4.8).
func (s *step) runEffect(n *node) (runtime.StepPlan, error) {
	bus := s.busInput()
	resolved, err := s.resolveInputs(n, bus)
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (%s): resolving inputs: %w", n.ID, n.Type, err)
	}
	if pin := scalarBusPin[n.Type]; pin != "" && len(resolved) == 0 && isScalarBus(bus) {
		// Nothing resolved: the reference runs the builder on the bus
		// itself (as a function node runs on its base input, §4.2 step
		// 4), and these builders take a non-object input whole as
		// str(input).
		resolved = map[string]any{pin: pyval.Str(bus)}
	}
	payload, err := s.buildPayload(n, resolved)
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (%s): %w", n.ID, n.Type, err)
	}
	if n.effectType == durable.EffectLLMCall {
		s.injectContext(payload)
	}
	return s.effectPlan(n, n.effectType, payload, n.linear), nil
}

// scalarBusPin names, for the effect nodes whose reference builder takes
// a non-object input whole, the pin that input stands for: ask_user's
// prompt, answer_user's message, wait_event's event_key, llm_call's
// prompt, memory_note's content (the note) and memory_query's query are
// str(input); the builders' other fields keep their defaults.
var scalarBusPin = map[string]string{
	"ask_user": "prompt", "answer_user": "message", "wait_event": "event_key",
	"llm_call": "prompt", "memory_note": "content", "memory_query": "query",
}

// effectPlan emits an effect whose outcome is stored at
// _temp.effects.<id>, continuing at next (or completing when "").
func (s *step) effectPlan(n *node, t durable.EffectType, payload map[string]any, next string) runtime.StepPlan {
	payload["type"] = string(t)
	payload["resume_to_node"] = nullable(next)
	eff := &durable.Effect{Type: t, Payload: payload, ResultKey: "_temp.effects." + n.ID}
	return runtime.Request(eff, next)
}

// buildPayload dispatches to the payload builder of the node type and
// returns a payload that shares no map or slice with the inputs: the
// builders place input values (tags, choices, extra, source items, ...)
// as they are, and the inputs are the run's vars (pulled node outputs
// are not copied), which a handler changing its payload, or a later
// change to the vars, must not reach through the recorded effect.
func (s *step) buildPayload(n *node, in map[string]any) (map[string]any, error) {
	p, err := s.buildPayloadShared(n, in)
	if err != nil {
		return nil, err
	}
	return pyval.DeepCopy(p).(map[string]any), nil
}

// buildPayloadShared is buildPayload without the copy.
func (s *step) buildPayloadShared(n *node, in map[string]any) (map[string]any, error) {
	cfg, _ := n.Data["effectConfig"].(map[string]any)
	if cfg == nil {
		cfg = map[string]any{}
	}
	switch n.Type {
	case "ask_user":
		prompt, ok := in["prompt"]
		if !ok {
			prompt = "Please respond:"
		}
		choices, ok := in["choices"]
		if !ok {
			choices = []any{}
		}
		allow := true
		if v, ok := cfg["allowFreeText"]; ok {
			allow = pyval.Truthy(v)
		}
		return map[string]any{"prompt": prompt, "choices": choices, "allow_free_text": allow}, nil
	case "answer_user":
		msg := ""
		if v := in["message"]; v != nil {
			msg = pyval.Str(v)
		}
		return map[string]any{"message": msg, "level": answerLevel(in["level"])}, nil
	case "wait_until":
		return s.waitUntilPayload(in, cfg)
	case "wait_event":
		return waitEventPayload(in), nil
	case "listen_voice":
		return listenVoicePayload(in, cfg), nil
	case "tool_calls":
		return toolCallsPayload(in, cfg, false), nil
	case "call_tool":
		return toolCallsPayload(in, cfg, true), nil
	case "model_residency":
		return modelResidencyPayload(in, cfg), nil
	case "llm_call":
		return s.llmCallPayload(n, in, cfg)
	}
	if strings.HasPrefix(n.Type, "memory_") {
		return memoryPayload(n.Type, in, cfg), nil
	}
	return mediaPayload(n.Type, in, cfg)
}

// answerLevel normalises answer_user levels.
func answerLevel(v any) string {
	l := ""
	if v != nil {
		l = pyval.Lower(pyval.Strip(pyval.Str(v)))
	}
	switch l {
	case "warn", "warning":
		return "warning"
	case "error":
		return "error"
	}
	return "message"
}

func (s *step) waitUntilPayload(in, cfg map[string]any) (map[string]any, error) {
	unit, _ := cfg["durationType"].(string)
	d := in["duration"]
	if unit == "timestamp" {
		// str(duration or ""): a missing or falsy duration is a blank
		// until, which the runtime reports as missing.
		until := ""
		if pyval.Truthy(d) {
			until = pyval.Str(d)
		}
		return map[string]any{"until": until}, nil
	}
	// An unreadable duration waits 0 seconds, but "nan" reads as a float
	// and fails below, as Python's timedelta raises on it. The reference
	// catches only TypeError/ValueError, so an int too large for a float
	// (OverflowError) fails the node.
	secs, err := pyval.ToFloat(d)
	if errors.Is(err, pyval.ErrIntTooLargeForFloat) {
		return nil, fmt.Errorf("wait_until: duration: %w", err)
	}
	if err != nil {
		secs = 0
	}
	switch unit {
	case "minutes":
		secs *= 60
	case "hours":
		secs *= 3600
	}
	until, err := addSeconds(s.now(), secs)
	if err != nil {
		return nil, fmt.Errorf("wait_until: duration %v %s: %w", d, cmp.Or(unit, "seconds"), err)
	}
	return map[string]any{"until": durable.FormatTime(until)}, nil
}

// addSeconds is t plus secs seconds, for any delay a datetime holds (a
// time.Duration stops at ~292 years); past year 9999 it is an error, as
// Python's datetime + timedelta raises OverflowError, and NaN or an
// infinity fail with the error Python's timedelta gives for them.
func addSeconds(t time.Time, secs float64) (time.Time, error) {
	const maxSecs = 1e4 * 366 * 86400 // beyond any datetime from any start
	if math.IsNaN(secs) || math.IsInf(secs, 0) {
		_, err := pyval.FloatToInt(secs)
		return time.Time{}, err
	}
	if math.Abs(secs) > maxSecs {
		return time.Time{}, errors.New("date value out of range")
	}
	days := math.Trunc(secs / 86400)
	rest := secs - days*86400
	out := t.AddDate(0, 0, int(days)).Add(time.Duration(rest * float64(time.Second)))
	if y := out.Year(); y < 1 || y > 9999 {
		return time.Time{}, errors.New("date value out of range")
	}
	return out, nil
}

func waitEventPayload(in map[string]any) map[string]any {
	key, ok := in["event_key"]
	if !ok {
		key = "default"
	}
	p := map[string]any{"wait_key": key}
	if s, ok := in["prompt"].(string); ok && pyval.Strip(s) != "" {
		p["prompt"] = s
	}
	// A list stays a list, empty when no entry is non-blank text, as the
	// reference sends it (the wait then stores choices [] rather than null).
	if list, ok := in["choices"].([]any); ok {
		cs := []any{}
		for _, c := range list {
			if s, ok := c.(string); ok && pyval.Strip(s) != "" {
				cs = append(cs, s)
			}
		}
		p["choices"] = cs
	}
	// A null pin counts as unset, as the reference reads it: the alias,
	// then the default true.
	allow := true
	if v := firstNonNull(in, "allow_free_text", "allowFreeText"); v != nil {
		allow = pyval.Truthy(v)
	}
	p["allow_free_text"] = allow
	return p
}

// listenVoicePayload builds the listen_voice payload (§6.11): every
// setting is "pins ▸ config" with the reference's aliases, so a node
// configured in the editor (effectConfig) is honoured.
func listenVoicePayload(in, cfg map[string]any) map[string]any {
	// str(value or default): a falsy value falls back like a missing one.
	strOr := func(v any, def string) string {
		if !pyval.Truthy(v) {
			return def
		}
		return pyval.Str(v)
	}
	key := strOr(pick(in, cfg, "wait_key", "event_key"), "voice_input")
	prompt := strOr(pick(in, cfg, "prompt"), "Speak now.")
	details := map[string]any{"input_mode": "voice", "content_types": []any{"audio/wav", "audio/mpeg", "audio/webm"}}
	if s := trimmed(pick(in, cfg, "language")); s != "" {
		details["language"] = s
	}
	if s := trimmed(pick(in, cfg, "stt_provider", "sttProvider", "provider_voice")); s != "" {
		details["provider"] = s
	}
	if s := trimmed(pick(in, cfg, "stt_model", "sttModel", "model_voice")); s != "" {
		details["model"] = s
	}
	if f, ok := floatOK(pick(in, cfg, "max_duration_s", "maxDurationS")); ok {
		details["max_duration_s"] = f
	}
	return map[string]any{"wait_key": key, "prompt": prompt, "allow_free_text": true, "details": details}
}

// trimmed returns a trimmed string value, "" for non-strings.
func trimmed(v any) string {
	s, _ := v.(string)
	return pyval.Strip(s)
}

// floatOK is float(v) for non-null, non-NaN values.
func floatOK(v any) (float64, bool) {
	if v == nil {
		return 0, false
	}
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	f, err := pyval.ToFloat(v)
	if err != nil || f != f {
		return 0, false
	}
	return f, true
}

// intOK is int(float(v)) for non-null, non-bool values.
func intOK(v any) (int64, bool) {
	if v == nil {
		return 0, false
	}
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	i, err := pyval.ToIntViaFloat(v)
	return i, err == nil
}

// toolCallsPayload builds tool_calls / call_tool payloads (§6.9).
func toolCallsPayload(in, cfg map[string]any, single bool) map[string]any {
	var calls []any
	if single {
		v := firstNonNull(in, "tool_call", "toolCall")
		if s, ok := v.(string); ok {
			v, _ = pyval.LoadsJSON(s)
		}
		if m, ok := v.(map[string]any); ok {
			calls = []any{m}
		}
	} else {
		// A string is decoded until it is not one (Python's normaliser
		// recurses on what it parsed): JSON text encoded twice still gives
		// its calls. Each pass shortens the text, so this ends.
		v := in["tool_calls"]
		for {
			s, ok := v.(string)
			if !ok {
				break
			}
			v, _ = pyval.LoadsJSON(s)
		}
		switch x := v.(type) {
		case map[string]any:
			calls = []any{x}
		case []any:
			for _, c := range x {
				if m, ok := c.(map[string]any); ok {
					calls = append(calls, m)
				}
			}
		}
	}
	if calls == nil {
		calls = []any{}
	}
	p := map[string]any{"tool_calls": calls}
	// Either key being present (even as null) means the pins specify the
	// allowlist, but its value is the first non-null alias, as in the
	// reference's get("allowed_tools") then get("allowedTools"): a null
	// allowed_tools next to a listed allowedTools must still restrict the
	// call.
	if _, ok := first(in, "allowed_tools", "allowedTools"); ok {
		p["allowed_tools"] = cleanStrings(firstNonNull(in, "allowed_tools", "allowedTools"))
	} else if v := firstNonNull(cfg, "allowed_tools", "allowedTools"); v != nil {
		if _, isList := v.([]any); isList {
			p["allowed_tools"] = cleanStrings(v)
		}
	}
	return p
}

// cleanStrings returns the trimmed non-empty strings of a list ([] for
// non-lists).
func cleanStrings(v any) []any {
	out := []any{}
	list, _ := v.([]any)
	for _, x := range list {
		if s := trimmed(x); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// modelResidencyPayload builds the model_residency payload (§6.9). Each
// setting is "pins ▸ config" (pick); as in the reference, operation is
// str(value or "list_loaded").strip() and the text settings are kept
// only as non-blank strings, stripped.
func modelResidencyPayload(in, cfg map[string]any) map[string]any {
	op := "list_loaded"
	if v := pick(in, cfg, "operation"); pyval.Truthy(v) {
		op = pyval.Strip(pyval.Str(v))
	}
	if op == "" {
		op = "list_loaded"
	}
	p := map[string]any{"operation": op}
	for key, aliases := range map[string][]string{
		"task": {"task"}, "provider": {"provider"}, "model": {"model"},
		"runtime_id": {"runtime_id", "runtimeId"}, "base_url": {"base_url", "baseUrl"},
		"provider_api_key": {"provider_api_key", "api_key", "apiKey"}, "cache_policy": {"cache_policy", "cachePolicy"},
	} {
		if s := trimmed(pick(in, cfg, aliases...)); s != "" {
			p[key] = s
		}
	}
	if f, ok := floatOK(pick(in, cfg, "timeout_s", "timeout", "timeoutS")); ok {
		p["timeout_s"] = f
	}
	if o, ok := pick(in, cfg, "options").(map[string]any); ok {
		p["options"] = o
	}
	// pin / required are sent when either side names them, but their value
	// still goes through pick: a null or "" pin falls back to the config,
	// then to the default (pin true, required false), rather than reading
	// as false.
	for k, def := range map[string]bool{"pin": true, "required": false} {
		_, inPins := in[k]
		_, inCfg := cfg[k]
		if inPins || inCfg {
			v := pick(in, cfg, k)
			if v == nil {
				v = def
			}
			p[k] = pyval.CoerceBool(v)
		}
	}
	return p
}

// pick implements "pins ▸ config": the first pin alias with a value other
// than null/"" wins, else the first such config alias, else nil.
func pick(in, cfg map[string]any, aliases ...string) any {
	for _, src := range []map[string]any{in, cfg} {
		for _, k := range aliases {
			if v, ok := src[k]; ok && v != nil && v != "" {
				return v
			}
		}
	}
	return nil
}
