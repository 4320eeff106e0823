package durable

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// StoredCopy returns a deep copy of s exactly as UnmarshalRecord gives it
// back after MarshalRecord (Seq kept): JSON values in the decoder's Go
// types (see pyjson.Normalize), times in UTC to the microsecond. A store
// that serves ledger reads from memory hands out such copies, so a hot
// read and a read from disk never differ. Values it cannot mirror cheaply
// take the encode-and-decode path. s must be encodable.
func (s *StepRecord) StoredCopy() (*StepRecord, error) {
	c, ok := s.StoredHead()
	if !ok {
		return s.roundTrip()
	}
	// Each value at the depth the record's JSON holds it (the extra
	// members are the record's own), so that the nesting limit is the
	// encoder's.
	var err error
	if c.Effect != nil {
		ce := *c.Effect
		if ce.Payload, err = pyjson.NormalizeObjectMember(s.Effect.Payload, 2); err != nil {
			return nil, err
		}
		c.Effect = &ce
	}
	if c.Result, err = pyjson.NormalizeMember(s.Result, 1); err != nil {
		return nil, err
	}
	if len(s.Extra) > 0 {
		if c.Extra, err = pyjson.NormalizeObjectMember(s.Extra, 0); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// StoredHead is StoredCopy without the JSON values: result and extra are
// nil, and Effect is s's own (the caller copies it, and the payload in the
// decoder's types, pyjson.Normalize, its own way, as it does result and
// extra, extra staying nil when s has none). The values s keeps as read
// that it holds are scalars a copy may share (see plainRead). It reports
// false where StoredCopy takes the encode-and-decode path instead.
func (s *StepRecord) StoredHead() (StepRecord, bool) {
	if !s.plainForCopy() {
		return StepRecord{}, false
	}
	c := *s
	if _, ok := s.attemptRead.value(s.Attempt); !ok {
		// Written as the integer Attempt (0 as 1), which reads back as
		// nothing to keep.
		c.attemptRead = keptAttempt{}
		if c.Attempt == 0 {
			c.Attempt = 1
		}
	}
	c.Result, c.Extra = nil, nil
	c.StartedAt, c.startedRead = s.startedRead.stored(s.StartedAt)
	c.EndedAt, c.endedRead = s.endedRead.stored(s.EndedAt)
	return c, true
}

// plainForCopy tells whether StoredCopy can copy s member by member: valid
// UTF-8 in the typed strings, no Extra key shadowing a record member, and
// values kept as read that the copy may share.
func (s *StepRecord) plainForCopy() bool {
	if !validUTF8(s.RunID, s.StepID, s.NodeID, string(s.Status), s.Error, s.ActorID, s.SessionID,
		s.IdempotencyKey, s.PrevHash, s.RecordHash, s.Signature, s.startedRead.textOf(), s.endedRead.textOf()) {
		return false
	}
	if e := s.Effect; e != nil {
		if !validUTF8(string(e.Type), e.ResultKey) || !plainRead(e.payloadRead) {
			return false
		}
		for _, v := range e.extra {
			if !plainRead(v) {
				return false
			}
		}
	}
	for k := range s.Extra {
		if recordMembers[k] {
			return false
		}
	}
	return !s.attemptRead.ok || plainRead(s.attemptRead.wire)
}

// plainRead tells whether a value kept as read (an attempt, an effect's
// payload or unknown member, a run's output) can be shared by the stored
// copy as it is: a scalar in the decoder's types. A list or an object
// (which may be the caller's own, from RecordFromJSON or RunFromJSON), or
// a value in other Go types, takes the encode-and-decode path, whose
// values are the copy's own.
func plainRead(v any) bool {
	switch x := v.(type) {
	case nil, bool, json.Number:
		return true
	case string:
		return utf8.ValidString(x)
	}
	return false
}

// recordMembers are the wire keys StepRecord maps to its own fields.
var recordMembers = map[string]bool{
	"run_id": true, "step_id": true, "node_id": true, "status": true, "effect": true,
	"result": true, "error": true, "started_at": true, "ended_at": true, "actor_id": true,
	"session_id": true, "attempt": true, "idempotency_key": true, "prev_hash": true,
	"record_hash": true, "signature": true,
}

func (s *StepRecord) roundTrip() (*StepRecord, error) {
	b, err := MarshalRecord(s, pyjson.Line)
	if err != nil {
		return nil, err
	}
	c, err := UnmarshalRecord(b)
	if err != nil {
		return nil, err
	}
	c.Seq = s.Seq
	return c, nil
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// StoredCopy returns a deep copy of r exactly as UnmarshalRun gives it
// back after MarshalRun (Version kept): JSON values in the decoder's Go
// types (pyjson.Normalize; nil vars as an empty object), times in UTC to
// the microsecond. A store that serves run reads from memory hands out
// such copies, so a hot read and a read from disk never differ. Values it
// cannot mirror cheaply take the encode-and-decode path. An r that cannot
// be encoded is an error naming the offending value's path.
func (r *RunState) StoredCopy() (*RunState, error) {
	c, ok := r.StoredHead()
	if !ok {
		return r.roundTrip()
	}
	// Each value at the depth the run's JSON holds it, so that the
	// nesting limit is the encoder's.
	var err error
	if c.Vars, err = pyjson.NormalizeObjectMember(r.Vars, 1); err != nil {
		return r.encodeError(err)
	}
	if r.Output != nil {
		if c.Output, err = pyjson.NormalizeObjectMember(r.Output, 1); err != nil {
			return r.encodeError(err)
		}
	}
	if r.Waiting != nil && r.Waiting.Details != nil {
		if c.Waiting.Details, err = pyjson.NormalizeObjectMember(r.Waiting.Details, 2); err != nil {
			return r.encodeError(err)
		}
	}
	return &c, nil
}

// StoredHead is StoredCopy without the JSON values: Vars, Output and
// Waiting.Details are nil (the caller copies them its own way), the wait
// and its choices are copies. It reports false where StoredCopy takes the
// encode-and-decode path instead: a typed string that is not valid UTF-8,
// which the encoder rewrites, or an output kept as read that is not a
// plain scalar (see plainRead).
func (r *RunState) StoredHead() (RunState, bool) {
	if !validUTF8(r.RunID, r.WorkflowID, string(r.Status), r.CurrentNode, r.Error, r.ActorID, r.SessionID,
		r.ParentRunID, r.createdText, r.updatedText) || !plainRead(r.outputRead) {
		return RunState{}, false
	}
	c := *r
	c.Vars, c.Output = nil, nil
	c.CreatedAt, c.UpdatedAt = NewTime(r.CreatedAt.Time), NewTime(r.UpdatedAt.Time)
	// A timestamp text is written only while its Time is zero: once a
	// Time is set, the copy read back has no text.
	if !c.CreatedAt.IsZero() {
		c.createdText = ""
	}
	if !c.UpdatedAt.IsZero() {
		c.updatedText = ""
	}
	if w := r.Waiting; w != nil {
		// A resume_to_node or choices kept as read (not a string, not a
		// list) is the caller's own value: like outputRead, only a plain one is shared; the rest
		// takes the round trip, which copies it or names what cannot be
		// encoded.
		if !validUTF8(string(w.Reason), w.WaitKey, w.ResumeToNode, w.ResultKey, w.Prompt, w.untilText) ||
			!validUTF8(w.Choices...) || !plainRead(w.resumeToValue) || !plainRead(w.choicesOther) {
			return RunState{}, false
		}
		cw := *w
		if w.Choices != nil {
			cw.Choices = make([]string, len(w.Choices)) // make+copy keeps [] distinct from null
			copy(cw.Choices, w.Choices)
		}
		cw.Until = NewTime(w.Until.Time)
		cw.Details = nil
		c.Waiting = &cw
	}
	return c, true
}

func (r *RunState) roundTrip() (*RunState, error) {
	b, err := MarshalRun(r, pyjson.Line)
	if err != nil {
		return nil, err
	}
	c, err := UnmarshalRun(b)
	if err != nil {
		return nil, err
	}
	c.Version = r.Version
	return c, nil
}

// encodeError returns the encoder's error for r, which names the path of
// the value it refuses, in place of err from a fast path that does not.
func (r *RunState) encodeError(err error) (*RunState, error) {
	if _, encErr := MarshalRun(r, pyjson.Line); encErr != nil {
		return nil, encErr
	}
	return nil, err
}
