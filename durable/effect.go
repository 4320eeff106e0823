package durable

import "github.com/abstractframework/abstractgateway/internal/pyjson"

// Effect is a request for a side effect, produced by a node and executed by
// a handler. ResultKey is the dotted path in vars where a completed result
// (or a resume payload) is written; "" means null.
type Effect struct {
	Type      EffectType
	Payload   map[string]any
	ResultKey string

	emptyNotNull emptyFields // a result_key read as "" (see StepRecord)
}

// Clone returns a deep copy of e.
func (e *Effect) Clone() *Effect {
	if e == nil {
		return nil
	}
	c := *e
	c.Payload = pyjson.CloneObject(e.Payload)
	return &c
}

// JSONValue returns the three-key wire object {type, payload, result_key}.
func (e *Effect) JSONValue() any {
	if e == nil {
		return nil
	}
	payload := e.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	return pyjson.Ordered{
		{Key: "type", Value: string(e.Type)},
		{Key: "payload", Value: payload},
		{Key: "result_key", Value: e.emptyNotNull.str(emptyResultKey, e.ResultKey)},
	}
}

func decodeEffect(v any) (*Effect, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError("effect", "an object or null", v)
	}
	var e Effect
	var err error
	t, err := getString(m, "type")
	if err != nil {
		return nil, err
	}
	e.Type = EffectType(t)
	if e.Payload, err = getObject(m, "payload"); err != nil {
		return nil, err
	}
	if e.Payload == nil {
		e.Payload = map[string]any{}
	}
	if e.ResultKey, err = getString(m, "result_key"); err != nil {
		return nil, err
	}
	e.emptyNotNull.note(emptyResultKey, m["result_key"])
	return &e, nil
}
