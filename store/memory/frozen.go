package memory

import "github.com/abstractframework/abstractgateway/durable"

// The store keeps what it is given frozen: a deep copy in which every
// object (map[string]any) becomes an exact-size slice of members and every
// array ([]any) a new slice, recursively. Readers get a fresh thawed copy.
//
// A frozen copy isolates the store from its callers as a pyjson.Clone
// does (values of other types are shared by both, as Clone shares them),
// in well under half the memory: a Go map of a handful of keys takes
// several hundred bytes (its table holds eight slots), a member 32. What a
// store keeps is what a process must fault in page by page, and on this
// project's reference VM a page touched for the first time costs ~11 µs
// (docs/benchmarks.md, the page_first_touch ceiling), more than freezing
// and thawing a run together.

// member is one key of a frozen object; value is frozen.
type member struct {
	key   string
	value any
}

// frozenObject is a frozen map[string]any. A nil frozenObject stands for a
// nil map, an empty non-nil one for an empty map.
type frozenObject []member

// frozenArray is a frozen []any, nil for a nil slice.
type frozenArray []any

func freeze(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return freezeObject(x)
	case []any:
		if x == nil {
			return frozenArray(nil)
		}
		out := make(frozenArray, len(x))
		for i, e := range x {
			out[i] = freeze(e)
		}
		return out
	default:
		return v
	}
}

func freezeObject(m map[string]any) frozenObject {
	if m == nil {
		return nil
	}
	out := make(frozenObject, 0, len(m))
	for k, e := range m {
		out = append(out, member{key: k, value: freeze(e)})
	}
	return out
}

func thaw(v any) any {
	switch x := v.(type) {
	case frozenObject:
		return x.thaw()
	case frozenArray:
		if x == nil {
			return []any(nil)
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = thaw(e)
		}
		return out
	default:
		return v
	}
}

// thaw returns a new map holding a deep copy of o.
func (o frozenObject) thaw() map[string]any {
	if o == nil {
		return nil
	}
	out := make(map[string]any, len(o))
	for _, m := range o {
		out[m.key] = thaw(m.value)
	}
	return out
}

// get returns the frozen value of key.
func (o frozenObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// storedRun is a run as the store keeps it: run holds every field but the
// maps, which are frozen beside it (run.Vars, run.Output and
// run.Waiting.Details are nil).
type storedRun struct {
	run     durable.RunState
	vars    frozenObject
	output  frozenObject
	details frozenObject
}

func newStoredRun(r *durable.RunState) storedRun {
	s := storedRun{run: *r, vars: freezeObject(r.Vars), output: freezeObject(r.Output)}
	s.run.Vars, s.run.Output = nil, nil
	if r.Waiting != nil {
		w := *r.Waiting
		if w.Choices != nil { // make+copy keeps an empty list distinct from null
			w.Choices = make([]string, len(r.Waiting.Choices))
			copy(w.Choices, r.Waiting.Choices)
		}
		s.details, w.Details = freezeObject(w.Details), nil
		s.run.Waiting = &w
	}
	return s
}

// thaw returns a new RunState equal to the one stored.
func (s *storedRun) thaw() *durable.RunState {
	r := s.run
	r.Vars, r.Output = s.vars.thaw(), s.output.thaw()
	if s.run.Waiting != nil {
		w := *s.run.Waiting
		if w.Choices != nil {
			w.Choices = make([]string, len(s.run.Waiting.Choices))
			copy(w.Choices, s.run.Waiting.Choices)
		}
		w.Details = s.details.thaw()
		r.Waiting = &w
	}
	return &r
}

// storedRecord is a ledger record as the store keeps it: rec without its
// effect, result and extra, which are frozen beside it.
type storedRecord struct {
	rec       durable.StepRecord
	hasEffect bool
	effect    durable.Effect // Payload nil; see payload
	payload   frozenObject
	result    any
	extra     frozenObject
}

func newStoredRecord(r *durable.StepRecord) *storedRecord {
	s := &storedRecord{rec: *r, result: freeze(r.Result), extra: freezeObject(r.Extra)}
	s.rec.Effect, s.rec.Result, s.rec.Extra = nil, nil, nil
	if r.Effect != nil {
		s.hasEffect = true
		s.effect = *r.Effect
		s.payload, s.effect.Payload = freezeObject(r.Effect.Payload), nil
	}
	return s
}

// thaw returns a new StepRecord equal to the one stored.
func (s *storedRecord) thaw() *durable.StepRecord {
	r := s.rec
	r.Result, r.Extra = thaw(s.result), s.extra.thaw()
	if s.hasEffect {
		e := s.effect
		e.Payload = s.payload.thaw()
		r.Effect = &e
	}
	return &r
}
