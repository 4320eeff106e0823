package frozen

import "github.com/abstractframework/abstractgateway/durable"

// Run is a frozen RunState.
type Run struct {
	head    durable.RunState // every field but the maps (Vars, Output, Waiting.Details nil)
	vars    Object
	output  Object
	details Object
}

// NewRun returns a frozen deep copy of r. An output r keeps as read (one that
// is not an object) is shared: durable never changes it and
// hands out only copies, so r must be decoded or a StoredCopy, not built
// from a caller's maps (NewStoredRun copies those).
func NewRun(r *durable.RunState) Run {
	f := Run{head: *r, vars: FreezeObject(r.Vars), output: FreezeObject(r.Output)}
	f.head.Vars, f.head.Output = nil, nil
	if r.Waiting != nil {
		w := *r.Waiting
		w.Choices = copyChoices(w.Choices)
		f.details, w.Details = FreezeObject(w.Details), nil
		f.head.Waiting = &w
	}
	return f
}

// Head returns the run's fields without its maps (Vars, Output and
// Waiting.Details are nil), for filters; it must not be modified.
func (f *Run) Head() *durable.RunState { return &f.head }

// Var returns a thawed copy of the run's variable key.
func (f *Run) Var(key string) (any, bool) { return f.vars.Get(key) }

// Thaw returns a new RunState equal to the one frozen.
func (f *Run) Thaw() *durable.RunState {
	r := f.head
	r.Vars, r.Output = f.vars.Thaw(), f.output.Thaw()
	if f.head.Waiting != nil {
		w := *f.head.Waiting
		w.Choices = copyChoices(w.Choices)
		w.Details = f.details.Thaw()
		r.Waiting = &w
	}
	return &r
}

// copyChoices copies with make+copy, which keeps an empty list distinct
// from null.
func copyChoices(c []string) []string {
	if c == nil {
		return nil
	}
	out := make([]string, len(c))
	copy(out, c)
	return out
}

// Record is a frozen StepRecord.
type Record struct {
	head      durable.StepRecord // every field but Effect, Result and Extra
	hasEffect bool
	effect    durable.Effect // Payload nil; see payload
	payload   Object
	result    Value
	extra     Object
}

// NewRecord returns a frozen deep copy of r. The values r keeps as read
// (a foreign attempt, an effect payload that is not an object, an
// effect's unknown members) are shared: durable never changes them and
// hands out only copies, so r must be decoded or a StoredCopy, not built
// from a caller's maps (NewStoredRecord copies those).
func NewRecord(r *durable.StepRecord) *Record {
	f := &Record{head: *r, result: Freeze(r.Result), extra: FreezeObject(r.Extra)}
	f.head.Effect, f.head.Result, f.head.Extra = nil, nil, nil
	if r.Effect != nil {
		f.hasEffect = true
		f.effect = *r.Effect
		f.payload, f.effect.Payload = FreezeObject(r.Effect.Payload), nil
	}
	return f
}

// Head returns the record's fields without its effect, result and extra,
// for filters; it must not be modified.
func (f *Record) Head() *durable.StepRecord { return &f.head }

// Thaw returns a new StepRecord equal to the one frozen.
func (f *Record) Thaw() *durable.StepRecord {
	r := f.head
	r.Result, r.Extra = f.result.Thaw(), f.extra.Thaw()
	if f.hasEffect {
		e := f.effect
		e.Payload = f.payload.Thaw()
		r.Effect = &e
	}
	return &r
}
