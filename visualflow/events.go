package visualflow

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// normScope normalises an event scope (anything unknown → session).
func normScope(v any) string {
	s := strings.ToLower(trimmed(v))
	switch s {
	case "session", "workflow", "run", "global":
		return s
	}
	return "session"
}

// pushSelf makes n the active control node (listeners and recurrent
// schedules return to themselves when their branch ends).
func (s *step) pushSelf(n *node) {
	c := s.control()
	if c["return_to"] == n.ID {
		delete(c, "return_to")
	}
	if s.activeControl() != n.ID {
		s.push(n.ID)
	}
}

func eventConfig(n *node) map[string]any {
	cfg, _ := n.Data["eventConfig"].(map[string]any)
	if cfg == nil {
		return map[string]any{}
	}
	return cfg
}

// runOnEvent waits for a custom event; its branch returns to it and it
// waits again (§5.7).
func (s *step) runOnEvent(n *node) (runtime.StepPlan, error) {
	s.pushSelf(n)
	resolved, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		resolved = map[string]any{}
	}
	cfg := eventConfig(n)
	name := eventName(resolved, cfg)
	if name == "" {
		name = "*"
	}
	scope := cfg["scope"]
	if v, ok := resolved["scope"]; ok {
		scope = v
	}
	next := n.linear
	if next == "" {
		next = n.ID
	}
	payload := map[string]any{"scope": normScope(scope), "name": name}
	return s.effectPlan(n, durable.EffectWaitEvent, payload, next), nil
}

var intervalRE = regexp.MustCompile(`(?i)^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$`)

// runOnSchedule waits until the next scheduled time (§5.7).
func (s *step) runOnSchedule(n *node) (runtime.StepPlan, error) {
	resolved, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		resolved = map[string]any{}
	}
	// As the reference's str(pin or config).strip(): an empty pin (an empty
	// default or start parameter) leaves the configured schedule (default
	// 15s) in force, but a whitespace-only pin is truthy, wins, and fails
	// the run instead of silently using the config.
	spec := "15s"
	if c, _ := eventConfig(n)["schedule"].(string); pyval.Strip(c) != "" {
		spec = pyval.Strip(c)
	}
	if v := resolved["schedule"]; pyval.Truthy(v) {
		spec = pyval.Strip(pyval.Str(v))
	}
	if spec == "" {
		return runtime.StepPlan{}, fmt.Errorf("on_schedule node '%s' missing schedule", n.ID)
	}
	// As the reference: the config counts only as a real boolean, and a pin
	// value is read with Python's bool(), so the text "false" is true.
	recurrent := true
	if v, ok := eventConfig(n)["recurrent"].(bool); ok {
		recurrent = v
	}
	if v := resolved["recurrent"]; v != nil {
		recurrent = pyval.Truthy(v)
	}
	var until time.Time
	if m := intervalRE.FindStringSubmatch(spec); m != nil {
		x, _ := strconv.ParseFloat(m[1], 64)
		unit := map[string]float64{"ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}[strings.ToLower(m[2])]
		var err error
		if until, err = addSeconds(s.now(), x*unit); err != nil {
			return runtime.StepPlan{}, fmt.Errorf("node %s (on_schedule): schedule %q: %w", n.ID, spec, err)
		}
	} else {
		t, err := durable.ParseTime(spec)
		if err != nil {
			return runtime.StepPlan{}, fmt.Errorf("node %s (on_schedule): invalid schedule %q: expected an interval like 15s/5m/1h or an ISO timestamp", n.ID, spec)
		}
		until, recurrent = t.Time, false
	}
	if recurrent {
		s.pushSelf(n)
	}
	return s.effectPlan(n, durable.EffectWaitUntil, map[string]any{"until": durable.FormatTime(until)}, n.linear), nil
}

// runEmitEvent emits a custom event (§5.7).
func (s *step) runEmitEvent(n *node) (runtime.StepPlan, error) {
	resolved, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		resolved = map[string]any{}
	}
	cfg, _ := n.Data["effectConfig"].(map[string]any)
	// A whitespace-only name pin is truthy and hides the configured name,
	// so it fails the run as in the reference rather than emitting under
	// the config name.
	name := eventName(resolved, cfg)
	if name == "" {
		return runtime.StepPlan{}, fmt.Errorf("emit_event node '%s' missing event name", n.ID)
	}
	scope := cfg["scope"]
	if v, ok := resolved["scope"]; ok {
		scope = v
	}
	var payload map[string]any
	switch x := resolved["payload"].(type) {
	case map[string]any:
		payload = x
	case nil:
		payload = map[string]any{}
	default:
		payload = map[string]any{"value": x}
	}
	// A session_id pin holding anything (even blank or not a string)
	// replaces the configured target, as in the reference.
	var session string
	if v := resolved["session_id"]; v != nil {
		if str, ok := v.(string); ok {
			session = pyval.Strip(str)
		}
	} else {
		session = trimmed(firstNonNull(cfg, "session_id", "sessionId"))
	}
	seqs := objectAt(s.tmp, "event_seq")
	seq := intOf(seqs[n.ID]) + 1
	seqs[n.ID] = int64(seq)
	p := map[string]any{
		"scope": normScope(scope), "name": name, "payload": pyval.DeepCopy(payload),
		"event_id": fmt.Sprintf("%s:%s:%d", s.run.RunID, n.ID, seq), "max_steps": int64(0),
	}
	if session != "" {
		p["session_id"] = session
	}
	return s.effectPlan(n, durable.EffectEmitEvent, p, n.linear), nil
}

// eventName is the reference's str(pin name or pin event_name or config
// name).strip(): the first truthy pin wins, even when it is only
// whitespace (which then reads as blank rather than falling back), and a
// non-string pin is read as Python's str().
func eventName(resolved, cfg map[string]any) string {
	v := pyval.GetOr(resolved, "name", "event_name")
	if !pyval.Truthy(v) {
		v = configEventName(cfg)
	}
	return pyval.Strip(pyval.StrOrEmpty(v))
}

// configEventName is the configured name (config name or event_name),
// used only when it is a non-blank string.
func configEventName(cfg map[string]any) string {
	s, _ := pyval.GetOr(cfg, "name", "event_name").(string)
	if pyval.Strip(s) == "" {
		return ""
	}
	return s
}
