package durable

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// StepRecord is one append-only ledger entry. The STARTED record of an
// effect attempt and its terminal record share a StepID.
type StepRecord struct {
	RunID          string
	StepID         string
	NodeID         string
	Status         StepStatus
	Effect         *Effect // nil for completion records
	Result         any     // completed: handler result; waiting: {"wait": …}
	Error          string
	StartedAt      Time
	EndedAt        Time
	ActorID        string
	SessionID      string
	Attempt        int
	IdempotencyKey string
	PrevHash       string
	RecordHash     string
	Signature      string

	// emptyNotNull records which of Error, ActorID and SessionID were
	// read as "" rather than null: Python keeps the two apart (a run
	// started with actor_id=""), and a record re-encoded or hashed must
	// write what was read, or a chain Python wrote would not verify.
	emptyNotNull emptyFields

	// Extra keeps members written by newer peers, so a record read and
	// re-encoded (or hashed) keeps them.
	Extra map[string]any

	// Seq is the store-assigned 1-based position in the run's ledger. It
	// is not part of the record JSON.
	Seq int64
}

// Clone returns a deep copy of s.
func (s *StepRecord) Clone() *StepRecord {
	c := *s
	c.Effect = s.Effect.Clone()
	c.Result = pyjson.Clone(s.Result)
	c.Extra = pyjson.CloneObject(s.Extra)
	return &c
}

// JSONValue returns the record as an ordered wire object (Python key
// order). withHash=false drops record_hash and signature: the text the
// hash chain hashes.
func (s *StepRecord) JSONValue(withHash bool) pyjson.Ordered {
	attempt := s.Attempt
	if attempt == 0 {
		attempt = 1
	}
	o := make(pyjson.Ordered, 0, 16+len(s.Extra))
	o = append(o,
		pyjson.KV{Key: "run_id", Value: s.RunID},
		pyjson.KV{Key: "step_id", Value: s.StepID},
		pyjson.KV{Key: "node_id", Value: s.NodeID},
		pyjson.KV{Key: "status", Value: string(s.Status)},
		pyjson.KV{Key: "effect", Value: s.Effect.JSONValue()},
		pyjson.KV{Key: "result", Value: s.Result},
		pyjson.KV{Key: "error", Value: s.emptyNotNull.str(emptyError, s.Error)},
		pyjson.KV{Key: "started_at", Value: s.StartedAt.jsonValue()},
		pyjson.KV{Key: "ended_at", Value: s.EndedAt.jsonValue()},
		pyjson.KV{Key: "actor_id", Value: s.emptyNotNull.str(emptyActor, s.ActorID)},
		pyjson.KV{Key: "session_id", Value: s.emptyNotNull.str(emptySession, s.SessionID)},
		pyjson.KV{Key: "attempt", Value: attempt},
		pyjson.KV{Key: "idempotency_key", Value: nullString(s.IdempotencyKey)},
		pyjson.KV{Key: "prev_hash", Value: nullString(s.PrevHash)},
	)
	if withHash {
		o = append(o,
			pyjson.KV{Key: "record_hash", Value: nullString(s.RecordHash)},
			pyjson.KV{Key: "signature", Value: nullString(s.Signature)})
	}
	for _, k := range pyjson.SortedKeys(s.Extra) {
		o = append(o, pyjson.KV{Key: k, Value: s.Extra[k]})
	}
	return o
}

// MarshalRecord encodes a record in the given style.
func MarshalRecord(s *StepRecord, st pyjson.Style) ([]byte, error) {
	return AppendRecord(nil, s, st)
}

// AppendRecord appends the encoding of s to buf, as MarshalRecord.
func AppendRecord(buf []byte, s *StepRecord, st pyjson.Style) ([]byte, error) {
	if st == pyjson.Line {
		return appendRecordLine(buf, s)
	}
	return pyjson.Append(buf, s.JSONValue(true), st, "")
}

// UnmarshalRecord decodes one ledger record.
func UnmarshalRecord(data []byte) (*StepRecord, error) {
	s := &StepRecord{Attempt: 1}
	if err := pyjson.DecodeObjectFunc(data, s.set); err != nil {
		return nil, fmt.Errorf("decoding ledger record: %w", err)
	}
	return s, nil
}

// RecordFromJSON builds a StepRecord from a decoded JSON object. Unknown
// status strings and effect types are kept (foreign ledgers may use them).
func RecordFromJSON(m map[string]any) (*StepRecord, error) {
	s := &StepRecord{Attempt: 1}
	for k, v := range m {
		if err := s.set(k, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// set assigns one member of the wire object; unknown keys go to Extra.
func (s *StepRecord) set(key string, v any) error {
	var err error
	switch key {
	case "run_id":
		s.RunID, err = asString(key, v)
	case "step_id":
		s.StepID, err = asString(key, v)
	case "node_id":
		s.NodeID, err = asString(key, v)
	case "status":
		var st string
		st, err = asString(key, v)
		s.Status = StepStatus(st)
	case "effect":
		s.Effect, err = decodeEffect(v)
	case "result":
		s.Result = v
	case "error":
		s.Error, err = asString(key, v)
		s.emptyNotNull.note(emptyError, v)
	case "started_at":
		s.StartedAt, err = asTime(key, v)
	case "ended_at":
		s.EndedAt, err = asTime(key, v)
	case "actor_id":
		s.ActorID, err = asString(key, v)
		s.emptyNotNull.note(emptyActor, v)
	case "session_id":
		s.SessionID, err = asString(key, v)
		s.emptyNotNull.note(emptySession, v)
	case "attempt":
		var a int64
		a, err = asInt(key, v, 1)
		s.Attempt = int(a)
	case "idempotency_key":
		s.IdempotencyKey, err = asString(key, v)
	case "prev_hash":
		s.PrevHash, err = asString(key, v)
	case "record_hash":
		s.RecordHash, err = asString(key, v)
	case "signature":
		s.Signature, err = asString(key, v)
	default:
		if s.Extra == nil {
			s.Extra = map[string]any{}
		}
		s.Extra[key] = v
	}
	return err
}

// emptyFields is a set of string fields read as "" rather than null.
type emptyFields uint8

const (
	emptyError emptyFields = 1 << iota
	emptyActor
	emptySession
	emptyResultKey
	emptyParent
)

// note adds f when the JSON value v read for it is "".
func (e *emptyFields) note(f emptyFields, v any) {
	if v == "" {
		*e |= f
	}
}

// str is the JSON value of field f holding s: null for "", unless "" was
// what was read.
func (e emptyFields) str(f emptyFields, s string) any {
	if s == "" && e&f != 0 {
		return ""
	}
	return nullString(s)
}
