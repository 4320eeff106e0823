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

	// absent records which of type, payload and result_key the object
	// read lacked (another writer's resume effect has no result_key).
	// Python hashes a stored record as json.loads gives it, so a member
	// still absent and still at the decoder's default ("", {} or null) is
	// written and hashed without it, as StepRecord.absent does for the
	// record's own members. An effect built in Go lacks none.
	absent effectMembers

	// typeNull records a type read as null (the mirror of
	// StepRecord.nullRead): written null while Type is still "".
	typeNull bool

	// payloadRead keeps a payload read that was not an object (null, a
	// list: Python records a node's payload as given), so a record Python
	// wrote and hashed is written back as it was while Payload stays
	// empty.
	payloadRead    any
	payloadNotDict bool

	// extra keeps members a newer writer added to an effect read from a
	// record, written back after result_key (sorted), so that a record
	// read and re-encoded or hashed keeps them, as StepRecord.Extra does.
	extra map[string]any

	// payloadRead and extra are never modified in place nor handed out
	// (JSONValue copies them), so struct copies of e share them (a store's
	// frozen copy and its reads). RecordFromJSON keeps its caller's values
	// there; StoredCopy and Clone copy them.
}

// payloadValue is the wire value of the payload, payloadRead itself: a
// caller handing it out copies it.
func (e *Effect) payloadValue() any {
	if e.payloadNotDict && len(e.Payload) == 0 {
		return e.payloadRead
	}
	if e.Payload == nil {
		return map[string]any{}
	}
	return e.Payload
}

// payloadCopy is payloadValue with a payload kept as read copied; Payload
// is the caller's own, as it is in e.
func (e *Effect) payloadCopy() any {
	if e.payloadNotDict && len(e.Payload) == 0 {
		return pyjson.Clone(e.payloadRead)
	}
	return e.payloadValue()
}

// effectMembers is a set of Effect's wire members.
type effectMembers uint8

const (
	effType effectMembers = 1 << iota
	effPayload
	effResultKey
)

// writesType, writesPayload and writesResultKey report whether the member
// is written: unless it was read absent and still holds the decoder's
// default (see absent).
func (e *Effect) writesType() bool {
	return e.absent&effType == 0 || e.Type != ""
}

func (e *Effect) writesPayload() bool {
	return e.absent&effPayload == 0 || len(e.Payload) != 0
}

func (e *Effect) writesResultKey() bool {
	return e.absent&effResultKey == 0 || e.ResultKey != ""
}

// typeValue is the wire value of type: null when it was read so and is
// still "" (typeNull).
func (e *Effect) typeValue() any {
	if e.Type == "" && e.typeNull {
		return nil
	}
	return string(e.Type)
}

// Clone returns a deep copy of e.
func (e *Effect) Clone() *Effect {
	if e == nil {
		return nil
	}
	c := *e
	c.Payload = pyjson.CloneObject(e.Payload)
	c.payloadRead = pyjson.Clone(e.payloadRead)
	c.extra = pyjson.CloneObject(e.extra)
	return &c
}

// JSONValue returns the wire object {type, payload, result_key} (less the
// members it was read without, see absent), followed by the members a
// newer writer added, if it was read with some. A payload that is not an
// object and those members are copies (see payloadRead): copies of e
// share them.
func (e *Effect) JSONValue() any {
	if e == nil {
		return nil
	}
	o := make(pyjson.Ordered, 0, 3+len(e.extra))
	if e.writesType() {
		o = append(o, pyjson.KV{Key: "type", Value: e.typeValue()})
	}
	if e.writesPayload() {
		o = append(o, pyjson.KV{Key: "payload", Value: e.payloadCopy()})
	}
	if e.writesResultKey() {
		o = append(o, pyjson.KV{Key: "result_key", Value: e.emptyNotNull.str(emptyResultKey, e.ResultKey)})
	}
	for _, k := range pyjson.SortedKeys(e.extra) {
		o = append(o, pyjson.KV{Key: k, Value: pyjson.Clone(e.extra[k])})
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
	for _, a := range [...]struct {
		key string
		m   effectMembers
	}{{"type", effType}, {"payload", effPayload}, {"result_key", effResultKey}} {
		if _, ok := m[a.key]; !ok {
			e.absent |= a.m
		}
	}
	t, err := getString(m, "type")
	if err != nil {
		return nil, err
	}
	e.Type = EffectType(t)
	if v, present := m["type"]; present && v == nil {
		e.typeNull = true
	}
	if p, ok := m["payload"].(map[string]any); ok {
		e.Payload = p
	} else if v, present := m["payload"]; present {
		e.Payload, e.payloadRead, e.payloadNotDict = map[string]any{}, v, true
	} else {
		e.Payload = map[string]any{} // absent: not written while empty (see absent)
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
