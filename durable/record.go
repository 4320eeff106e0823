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

	// Extra keeps members written by newer peers, so a record read and
	// re-encoded (or hashed) keeps them.
	Extra map[string]any

	// Seq is the store-assigned 1-based position in the run's ledger. It
	// is not part of the record JSON.
	Seq int64
}

var recordKeys = keySet("run_id", "step_id", "node_id", "status", "effect", "result", "error",
	"started_at", "ended_at", "actor_id", "session_id", "attempt", "idempotency_key",
	"prev_hash", "record_hash", "signature")

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
		pyjson.KV{Key: "error", Value: nullString(s.Error)},
		pyjson.KV{Key: "started_at", Value: s.StartedAt.jsonValue()},
		pyjson.KV{Key: "ended_at", Value: s.EndedAt.jsonValue()},
		pyjson.KV{Key: "actor_id", Value: nullString(s.ActorID)},
		pyjson.KV{Key: "session_id", Value: nullString(s.SessionID)},
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
	return pyjson.Append(nil, s.JSONValue(true), st, "")
}

// UnmarshalRecord decodes one ledger record.
func UnmarshalRecord(data []byte) (*StepRecord, error) {
	m, err := pyjson.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decoding ledger record: %w", err)
	}
	s, err := RecordFromJSON(m)
	if err != nil {
		return nil, fmt.Errorf("decoding ledger record: %w", err)
	}
	return s, nil
}

// RecordFromJSON builds a StepRecord from a decoded JSON object. Unknown
// status strings and effect types are kept (foreign ledgers may use them).
func RecordFromJSON(m map[string]any) (*StepRecord, error) {
	var s StepRecord
	var err error
	if s.RunID, err = getString(m, "run_id"); err != nil {
		return nil, err
	}
	if s.StepID, err = getString(m, "step_id"); err != nil {
		return nil, err
	}
	if s.NodeID, err = getString(m, "node_id"); err != nil {
		return nil, err
	}
	st, err := getString(m, "status")
	if err != nil {
		return nil, err
	}
	s.Status = StepStatus(st)
	if s.Effect, err = decodeEffect(m["effect"]); err != nil {
		return nil, err
	}
	s.Result = m["result"]
	if s.Error, err = getString(m, "error"); err != nil {
		return nil, err
	}
	if s.StartedAt, err = getTime(m, "started_at"); err != nil {
		return nil, err
	}
	if s.EndedAt, err = getTime(m, "ended_at"); err != nil {
		return nil, err
	}
	if s.ActorID, err = getString(m, "actor_id"); err != nil {
		return nil, err
	}
	if s.SessionID, err = getString(m, "session_id"); err != nil {
		return nil, err
	}
	a, err := getInt(m, "attempt", 1)
	if err != nil {
		return nil, err
	}
	s.Attempt = int(a)
	if s.IdempotencyKey, err = getString(m, "idempotency_key"); err != nil {
		return nil, err
	}
	if s.PrevHash, err = getString(m, "prev_hash"); err != nil {
		return nil, err
	}
	if s.RecordHash, err = getString(m, "record_hash"); err != nil {
		return nil, err
	}
	if s.Signature, err = getString(m, "signature"); err != nil {
		return nil, err
	}
	s.Extra = extraKeys(m, recordKeys)
	return &s, nil
}
