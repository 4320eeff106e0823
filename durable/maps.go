package durable

import "github.com/abstractframework/abstractgateway/internal/pyjson"

// Map returns the effect as a generic JSON object (for storing in vars).
func (e *Effect) Map() map[string]any {
	if e == nil {
		return nil
	}
	payload := pyjson.CloneObject(e.Payload)
	if payload == nil {
		payload = map[string]any{}
	}
	return map[string]any{"type": string(e.Type), "payload": payload, "result_key": nullString(e.ResultKey)}
}

// Map returns the wait as a generic JSON object with its nine keys.
func (w *WaitState) Map() map[string]any {
	if w == nil {
		return nil
	}
	var choices any
	if w.Choices != nil {
		cs := make([]any, len(w.Choices))
		for i, c := range w.Choices {
			cs[i] = c
		}
		choices = cs
	}
	var details any
	if w.Details != nil {
		details = pyjson.CloneObject(w.Details)
	}
	return map[string]any{
		"reason":          string(w.Reason),
		"wait_key":        nullString(w.WaitKey),
		"until":           w.Until.jsonValue(),
		"resume_to_node":  nullString(w.ResumeToNode),
		"result_key":      nullString(w.ResultKey),
		"prompt":          nullString(w.Prompt),
		"choices":         choices,
		"allow_free_text": w.AllowFreeText,
		"details":         details,
	}
}
