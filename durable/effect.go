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

	// payloadRead keeps a payload read that was not an object (null, a
	// list: Python records a node's payload as given), so a record Python
	// wrote and hashed is written back as it was while Payload stays
	// empty; never modified in place.
	payloadRead    any
	payloadNotDict bool

	// extra keeps members a newer writer added to an effect read from a
	// record, written back after result_key (sorted), so that a record
	// read and re-encoded or hashed keeps them, as StepRecord.Extra does;
	// never modified in place, so copies share it.
	extra map[string]any
}

// payloadValue is the wire value of the payload.
func (e *Effect) payloadValue() any {
	if e.payloadNotDict && len(e.Payload) == 0 {
		return pyjson.Clone(e.payloadRead) // shared by every copy of e
	}
	if e.Payload == nil {
		return map[string]any{}
	}
	return e.Payload
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

// JSONValue returns the wire object {type, payload, result_key}, followed
// by the members a newer writer added, if it was read with some.
func (e *Effect) JSONValue() any {
	if e == nil {
		return nil
	}
	o := pyjson.Ordered{
		{Key: "type", Value: string(e.Type)},
		{Key: "payload", Value: e.payloadValue()},
		{Key: "result_key", Value: e.emptyNotNull.str(emptyResultKey, e.ResultKey)},
	}
	for _, k := range pyjson.SortedKeys(e.extra) {
		o = append(o, pyjson.KV{Key: k, Value: e.extra[k]})
	}
	return o
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
	if p, ok := m["payload"].(map[string]any); ok {
		e.Payload = p
	} else if v, present := m["payload"]; present {
		e.Payload, e.payloadRead, e.payloadNotDict = map[string]any{}, v, true
	} else {
		e.Payload = map[string]any{} // absent: written {}, as before
	}
	if e.ResultKey, err = getString(m, "result_key"); err != nil {
		return nil, err
	}
	e.emptyNotNull.note(emptyResultKey, m["result_key"])
	for k, v := range m {
		if k != "type" && k != "payload" && k != "result_key" {
			if e.extra == nil {
				e.extra = map[string]any{}
			}
			e.extra[k] = v
		}
	}
	return &e, nil
}
