package durable

import "github.com/abstractframework/abstractgateway/internal/pyjson"

// Map returns the effect as a generic JSON object (for storing in vars):
// its wire object, deep-copied.
func (e *Effect) Map() map[string]any { return orderedMap(e.JSONValue()) }

// Map returns the wait as a generic JSON object with its nine keys: its
// wire object, deep-copied.
func (w *WaitState) Map() map[string]any { return orderedMap(w.JSONValue()) }

// orderedMap turns a wire object into a private generic object; nil stays
// nil.
func orderedMap(v any) map[string]any {
	o, ok := v.(pyjson.Ordered)
	if !ok {
		return nil
	}
	m := make(map[string]any, len(o))
	for _, kv := range o {
		m[kv.Key] = pyjson.Clone(kv.Value)
	}
	return m
}
