package durable

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// WaitState describes what a waiting run waits for. Empty strings are
// written as null.
type WaitState struct {
	Reason        WaitReason
	WaitKey       string // key a resumer must match; "" for time waits
	Until         Time   // deadline: WAIT_UNTIL, or a WAIT_EVENT timeout
	ResumeToNode  string // "" means a resume completes the run; also "" for a non-string target read
	ResultKey     string // where the resume payload is written
	Prompt        string
	Choices       []string // nil is null; display strings, see SetChoiceValues
	AllowFreeText bool
	Details       map[string]any

	// untilText keeps a deadline read as text ParseTime cannot read
	// (Python stores WAIT_UNTIL's until as the node gave it); Until is then
	// zero, so the wait is never due, and a rewrite keeps the text.
	untilText string

	// resumeToValue keeps a resume_to_node read as a non-string JSON value
	// (Python stores the payload's resume_to_node as given, 7 or true);
	// ResumeToNode is then "", and a rewrite keeps the value while it is.
	// Never modified in place: copies of the struct share it.
	resumeToValue any

	// choiceValues keeps a choices list that holds non-strings exactly as
	// given (Python copies ASK_USER's list as is), so a rewrite loses
	// nothing; nil when every choice is a string. Never modified in place:
	// copies of the struct share it.
	choiceValues []any

	// choicesOther keeps a choices member read that is neither a list nor
	// null ("yes/no", an object): Python's stores read it as given and
	// write it back, so a rewrite keeps it while Choices is nil. Never
	// modified in place: copies of the struct share it.
	choicesOther any
}

// SetChoiceValues sets the choices from a JSON list. Strings are kept as
// they are; a list holding other values (numbers, objects) is also kept
// whole for the wire, and Choices gets their JSON text for display. nil
// sets null.
func (w *WaitState) SetChoiceValues(list []any) {
	w.choiceValues, w.choicesOther = nil, nil
	if list == nil {
		w.Choices = nil
		return
	}
	w.Choices = make([]string, len(list))
	allStrings := true
	for i, c := range list {
		if s, ok := c.(string); ok {
			w.Choices[i] = s
			continue
		}
		allStrings = false
		w.Choices[i] = choiceText(c)
	}
	if !allStrings {
		if v, err := pyjson.Normalize(list); err == nil {
			w.choiceValues = v.([]any)
		}
	}
}

// ChoiceValues returns a copy of the choices as JSON values: the list
// given to SetChoiceValues (or read from the wire) when it held
// non-strings, else Choices.
func (w *WaitState) ChoiceValues() []any {
	if raw := w.rawChoices(); raw != nil {
		return pyjson.Clone(raw).([]any)
	}
	if w.Choices == nil {
		return nil
	}
	out := make([]any, len(w.Choices))
	for i, c := range w.Choices {
		out[i] = c
	}
	return out
}

// rawChoices returns choiceValues while it still matches Choices: a caller
// that assigned Choices directly since has replaced the list.
func (w *WaitState) rawChoices() []any {
	if w.choiceValues == nil || len(w.choiceValues) != len(w.Choices) {
		return nil
	}
	for i, c := range w.choiceValues {
		s, ok := c.(string)
		if !ok {
			s = choiceText(c)
		}
		if s != w.Choices[i] {
			return nil
		}
	}
	return w.choiceValues
}

// choiceText is the display text of a non-string choice: its JSON.
func choiceText(v any) string {
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Clone returns a deep copy of w.
func (w *WaitState) Clone() *WaitState {
	if w == nil {
		return nil
	}
	c := *w
	if w.Choices != nil {
		// make+copy, not append to nil: an empty non-nil list ([]) must
		// stay distinct from null.
		c.Choices = make([]string, len(w.Choices))
		copy(c.Choices, w.Choices)
	}
	c.Details = pyjson.CloneObject(w.Details)
	return &c
}

// JSONValue returns the nine-key wire object.
func (w *WaitState) JSONValue() any {
	if w == nil {
		return nil
	}
	var choices any
	if raw := w.rawChoices(); raw != nil {
		choices = pyjson.Clone(raw) // shared by every copy of w
	} else if w.Choices == nil && w.choicesOther != nil {
		choices = pyjson.Clone(w.choicesOther) // shared by every copy of w
	} else if w.Choices != nil {
		cs := make([]any, len(w.Choices))
		for i, c := range w.Choices {
			cs[i] = c
		}
		choices = cs
	}
	var details any
	if w.Details != nil {
		details = w.Details
	}
	return pyjson.Ordered{
		{Key: "reason", Value: string(w.Reason)},
		{Key: "wait_key", Value: nullString(w.WaitKey)},
		{Key: "until", Value: w.untilValue()},
		{Key: "resume_to_node", Value: w.ResumeToNodeValue()},
		{Key: "result_key", Value: nullString(w.ResultKey)},
		{Key: "prompt", Value: nullString(w.Prompt)},
		{Key: "choices", Value: choices},
		{Key: "allow_free_text", Value: w.AllowFreeText},
		{Key: "details", Value: details},
	}
}

// ReleasedWhenDue reports whether a tick releases the wait once Until has
// passed: a WAIT_UNTIL, or a WAIT_EVENT with a deadline. Waits of other
// reasons wait for their resume whatever their until says.
func (w *WaitState) ReleasedWhenDue() bool {
	return !w.Until.IsZero() && (w.Reason == WaitUntil || w.Reason == WaitEvent)
}

// SetResumeToValue sets the resume target from a wait payload's
// resume_to_node, stored as given as Python's wait handlers do: a string
// names the node (ResumeToNode); any other JSON value (7, true) is kept
// for the wire only, ResumeToNode staying "", so a resume treats it as no
// target (docs/compatibility.md); nil clears the target. The value is
// copied.
func (w *WaitState) SetResumeToValue(v any) {
	w.ResumeToNode, w.resumeToValue = "", nil
	switch x := v.(type) {
	case nil:
	case string:
		w.ResumeToNode = x
	default:
		if n, err := pyjson.Normalize(x); err == nil {
			w.resumeToValue = n
		} else {
			// Kept so the commit names what cannot be encoded.
			w.resumeToValue = pyjson.Clone(x)
		}
	}
}

// ResumeToNodeValue returns the wire value of resume_to_node: the node,
// else a non-string value set or read (a copy), else nil.
func (w *WaitState) ResumeToNodeValue() any {
	if w.ResumeToNode == "" && w.resumeToValue != nil {
		return pyjson.Clone(w.resumeToValue) // shared by every copy of w
	}
	return nullString(w.ResumeToNode)
}

// untilValue is the wire value of until: the time, else the text read.
func (w *WaitState) untilValue() any {
	if w.Until.IsZero() && w.untilText != "" {
		return w.untilText
	}
	return w.Until.jsonValue()
}

// DecodeWaitState reads a wait object as the Python stores do: reason is
// required and must be known; a resume_to_node that is not a string is
// kept for the wire (ResumeToNode is ""), as is a choices member that is
// not a list (Choices is nil); allow_free_text is true when missing, else
// the truthiness of its value (null is false).
func DecodeWaitState(v any) (*WaitState, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError("waiting", "an object or null", v)
	}
	var w WaitState
	r, err := getString(m, "reason")
	if err != nil {
		return nil, err
	}
	w.Reason = WaitReason(r)
	if !w.Reason.Valid() {
		return nil, fmt.Errorf("waiting.reason: unknown wait reason %q", r)
	}
	if w.WaitKey, err = getString(m, "wait_key"); err != nil {
		return nil, err
	}
	if w.Until, err = getTime(m, "until"); err != nil {
		text, ok := m["until"].(string)
		if !ok {
			return nil, err
		}
		w.Until, w.untilText = Time{}, text
	}
	// Python's wait handlers store payload.get("resume_to_node") unchecked
	// and its stores read it back as is: keep any other value as read.
	switch v := m["resume_to_node"].(type) {
	case nil:
	case string:
		w.ResumeToNode = v
	default:
		w.resumeToValue = pyjson.Clone(v) // copies share it: it must not be the caller's
	}
	if w.ResultKey, err = getString(m, "result_key"); err != nil {
		return nil, err
	}
	if w.Prompt, err = getString(m, "prompt"); err != nil {
		return nil, err
	}
	// Python's stores read choices as given: a value that is not a list
	// is kept for the wire only (Choices stays nil), not dropped.
	switch c := m["choices"].(type) {
	case nil:
	case []any:
		w.SetChoiceValues(c)
	default:
		w.choicesOther = pyjson.Clone(c) // copies share it: it must not be the caller's
	}
	// Python's stores read bool(waiting.get("allow_free_text", True)):
	// only a missing member is true; null is false, any other value
	// stands for its truthiness.
	w.AllowFreeText = true
	if v, ok := m["allow_free_text"]; ok {
		w.AllowFreeText = pyval.Truthy(v)
	}
	if w.Details, err = getObject(m, "details"); err != nil {
		return nil, err
	}
	return &w, nil
}
