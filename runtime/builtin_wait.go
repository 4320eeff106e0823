package runtime

import (
	"context"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// builtinHandlers returns the handlers every runtime has. Hosts add the
// AbstractCore-style ones (LLM_CALL, TOOL_CALLS, …) through Config.Handlers.
func builtinHandlers() map[durable.EffectType]Handler {
	return map[durable.EffectType]Handler{
		durable.EffectAskUser:          {Func: handleAskUser, Local: true},
		durable.EffectAnswerUser:       {Func: handleAnswerUser, Local: true},
		durable.EffectWaitEvent:        {Func: handleWaitEvent, Local: true},
		durable.EffectWaitUntil:        {Func: handleWaitUntil, Local: true},
		durable.EffectEmitEvent:        {Func: handleEmitEvent},
		durable.EffectStartSubworkflow: {Func: handleStartSubworkflow},
		durable.EffectVarsQuery:        {Func: handleVarsQuery, Local: true},
		durable.EffectMemoryNote:       {Func: handleMemoryNote, RerunOnReplay: true},
		durable.EffectMemoryQuery:      {Func: handleMemoryQuery},
		durable.EffectMemoryTag:        {Func: handleMemoryTag, RerunOnReplay: true},
		durable.EffectMemoryRehydrate:  {Func: handleMemoryRehydrate, RerunOnReplay: true},
		durable.EffectMemoryCompact:    {Func: handleMemoryCompact, RerunOnReplay: true},
	}
}

// ASK_USER: always waits for a person.
func handleAskUser(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	if !truthy(p["prompt"]) {
		return Failed("ask_user requires payload.prompt"), nil
	}
	prompt := pyval.Str(p["prompt"]) // Python: str(prompt)
	allow := true
	if v, ok := p["allow_free_text"]; ok {
		allow = truthy(v)
	}
	key := "user:" + req.Run.RunID + ":" + req.Run.CurrentNode
	if v := p["wait_key"]; truthy(v) {
		key = pyval.Str(v) // Python: str(wait_key), a number included
	}
	w := &durable.WaitState{
		Reason: durable.WaitUser, WaitKey: key,
		ResultKey: req.Effect.ResultKey, Prompt: prompt, AllowFreeText: allow,
	}
	req.setResumeTarget(w)
	if list, ok := p["choices"].([]any); ok {
		w.SetChoiceValues(list) // copied as is, as Python does
	}
	return Waiting(w), nil
}

// cleanStrings keeps the trimmed, non-blank strings of a JSON list;
// non-lists give nil.
func cleanStrings(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			if s = pyval.Strip(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ANSWER_USER: a message for the person, no wait.
func handleAnswerUser(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	// Python: message, else (text or content).
	msg := p["message"]
	if msg == nil {
		if msg = p["text"]; !truthy(msg) {
			msg = p["content"]
		}
	}
	if msg == nil {
		return Failed("answer_user requires payload.message"), nil
	}
	s := pyval.Str(msg)
	level := "message"
	lv, _ := p["level"].(string)
	// Python: str(level).strip().lower(), with its own whitespace and
	// case mapping ("warning\x1f" is a warning, "WARNİNG" is not).
	switch pyval.Lower(pyval.Strip(lv)) {
	case "warning", "warn":
		level = "warning"
	case "error":
		level = "error"
	}
	return Completed(map[string]any{"message": s, "level": level}), nil
}

// WAIT_EVENT: waits for a named event, optionally until a deadline
// (payload "until" as an ISO timestamp, or "timeout_s" seconds). Past the
// deadline the wait resolves with {"timed_out": true}.
func handleWaitEvent(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	var key string
	if v := p["wait_key"]; truthy(v) {
		key = pyval.Str(v) // wins if truthy, as in Python: a number, a blank string
	}
	if key == "" {
		// Python: name or event_name, which must be a non-blank string.
		raw := p["name"]
		if !truthy(raw) {
			raw = p["event_name"]
		}
		name, ok := raw.(string)
		if !ok || pyval.Strip(name) == "" {
			return Failed("wait_event requires payload.wait_key or payload.name"), nil
		}
		scope := eventScope(p["scope"])
		// Python: payload.session_id or the run's session or its id.
		session := sessionOr(req.Run)
		if v := p["session_id"]; truthy(v) {
			session = pyval.Str(v)
		}
		var err error
		key, err = EventKey(scope, name, scopeID(req.Run, scope, session))
		if err != nil {
			return Failed("wait_event invalid payload: " + err.Error()), nil
		}
	}
	w := &durable.WaitState{
		Reason: durable.WaitEvent, WaitKey: key,
		ResultKey: req.Effect.ResultKey, AllowFreeText: true,
		Choices: cleanStrings(p["choices"]),
	}
	req.setResumeTarget(w)
	if s, ok := p["prompt"].(string); ok && pyval.Strip(s) != "" {
		w.Prompt = s
	}
	for _, k := range []string{"allow_free_text", "allowFreeText"} {
		if v := p[k]; v != nil { // null falls through, as in Python
			w.AllowFreeText = truthy(v)
			break
		}
	}
	if d, ok := p["details"].(map[string]any); ok {
		w.Details = d
	}
	deadline, err := eventDeadline(p, req.Runtime.clock())
	if err != nil {
		return Failed("wait_event invalid payload: " + err.Error()), nil
	}
	w.Until = deadline
	return Waiting(w), nil
}

// maxTimeoutSeconds is about the longest timeout_s a time.Duration holds.
const maxTimeoutSeconds = float64(math.MaxInt64 / int64(time.Second))

func eventDeadline(p map[string]any, now time.Time) (durable.Time, error) {
	if v, ok := p["until"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return durable.Time{}, fmt.Errorf("until must be an ISO timestamp, not %T", v)
		}
		if pyval.Strip(s) != "" {
			return durable.ParseTime(s)
		}
	}
	if v, ok := p["timeout_s"]; ok && v != nil {
		secs, ok := AsFloat(v)
		if !ok || !(secs >= 0) {
			return durable.Time{}, fmt.Errorf("timeout_s must be a non-negative number")
		}
		// A timeout past what a Duration holds (~292 years, "never")
		// waits that long rather than overflowing into the past.
		d := time.Duration(math.MaxInt64)
		if secs < maxTimeoutSeconds {
			d = time.Duration(secs * float64(time.Second))
		}
		return durable.NewTime(now.Add(d)), nil
	}
	return durable.Time{}, nil
}

// WAIT_UNTIL: completes at once when the time has passed, else waits with
// no wait key until a tick finds it due.
func handleWaitUntil(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	raw, ok := p["until"].(string)
	if !ok || pyval.Strip(raw) == "" {
		return Failed("wait_until requires payload.until (ISO timestamp)"), nil
	}
	until, err := durable.ParseTime(raw)
	if err != nil {
		return Failed("wait_until: " + err.Error()), nil
	}
	if !req.Runtime.clock().Before(until.Time) {
		return Completed(map[string]any{"until": raw, "ready": true}), nil
	}
	w := &durable.WaitState{
		Reason: durable.WaitUntil, Until: until,
		ResultKey: req.Effect.ResultKey, AllowFreeText: true,
	}
	req.setResumeTarget(w)
	return Waiting(w), nil
}

// EventKey builds evt:<scope>:<scope_id>:<name> (scope, scope id and name
// trimmed, the scope lower-cased, as Python's build_event_wait_key).
func EventKey(scope, name, scopeID string) (string, error) {
	given := scope
	if given == "" {
		given = "session" // Python: str(scope or "session"); a blank one is unknown
	}
	if err := checkUTF8("event scope", given, "event name", name, "event scope id", scopeID); err != nil {
		return "", err
	}
	scope = eventScopeName(given)
	scopeID = pyval.Strip(scopeID)
	name = pyval.Strip(name)
	if name == "" {
		return "", fmt.Errorf("event name is required")
	}
	switch scope {
	case "session", "workflow", "run":
	case "global":
		scopeID = "global"
	default:
		return "", fmt.Errorf("unknown event scope: %s", pyval.Repr(given))
	}
	if scopeID == "" {
		return "", fmt.Errorf("missing scope id for scope=%s", pyval.Repr(scope))
	}
	return "evt:" + scope + ":" + scopeID + ":" + name, nil
}

// eventScopeName is the scope an event key is built with, Python's
// str(scope).strip().lower(): the key's scope part and the scope id it
// picks (scopeID) must agree, or a wait gets a key no emit builds.
func eventScopeName(scope string) string {
	return pyval.Lower(pyval.Strip(scope))
}

// scopeID is the scope id of an event key from the run's point of view:
// its workflow, itself, or for the session scope the session given; the
// scope is normalised as the key's (eventScopeName).
func scopeID(run *durable.RunState, scope, session string) string {
	switch eventScopeName(scope) {
	case "workflow":
		return run.WorkflowID
	case "run":
		return run.RunID
	case "global":
		return "global"
	}
	return session
}

// sessionOr is the run's session id, or its own id without one: the
// session scope's default.
func sessionOr(run *durable.RunState) string {
	if run.SessionID != "" {
		return run.SessionID
	}
	return run.RunID
}

// eventScope is Python's str(payload.scope or "session").
func eventScope(v any) string {
	if !truthy(v) {
		return "session"
	}
	return pyval.Str(v)
}

// checkUTF8 takes pairs of a name and a value and returns an error naming
// the first value that is not UTF-8: JSON text cannot hold it (a store
// would read back U+FFFD in its place, so look-ups by it would miss), and
// a Python peer could not have written it.
func checkUTF8(named ...string) error {
	for i := 0; i+1 < len(named); i += 2 {
		if !utf8.ValidString(named[i+1]) {
			return fmt.Errorf("%s %q is not valid UTF-8", named[i], named[i+1])
		}
	}
	return nil
}
