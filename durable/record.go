package durable

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// StepRecord is one append-only ledger entry. The STARTED record of an
// effect attempt and its terminal record share a StepID.
//
// Attempt is the attempt number. A record read whose attempt member is
// not an integer literal (Python's ledger stores keep any JSON value
// there without checking it) gets Python's int() of the value where that
// gives an integer that fits: "2" (sign, surrounding white space and
// single underscores between ASCII digits allowed) is 2, true 1, false 0,
// and a float is cut toward zero (2.5 is 2, -2.7 is -2); null, any other
// string ("2.0" too, as in Python), a list, an object, NaN, an infinity
// and a number past the int range give the default 1. The value read is
// still what the record writes and hashes, until Attempt is set to
// another number.
//
// StartedAt and EndedAt are the times read from started_at and ended_at,
// which Python keeps as any string it was given. A record read with a
// timestamp in another spelling than the isoformat Time writes ("…Z", a
// three-digit fraction, no offset, "") writes and hashes the text read
// until the field is set to another instant; text ParseTime cannot read
// ("yesterday") is kept the same way and gives the zero Time, so the
// record still reads. Setting such a field to the zero Time keeps the
// text.
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

	// emptyNotNull records which of Error, ActorID, SessionID,
	// IdempotencyKey and PrevHash were read as "" rather than null: Python
	// keeps the two apart (a run started with actor_id=""), and a record
	// re-encoded or hashed must write what was read, or a chain Python
	// wrote would not verify, and a prev_hash edited from null to "" would
	// go unnoticed (see SetPrevHash).
	emptyNotNull emptyFields

	// nullRead records which of RunID, StepID, NodeID and Status were read
	// as null: the mirror of emptyNotNull for the members written as
	// strings. Python's StepRecord holds what it was given (node_id=None)
	// and hashes it as stored, so such a member is written null while the
	// field is still "", or the writer's chain would not verify.
	nullRead nullFields

	// absent records which members the object read lacked (an older
	// Python writer has no session_id, attempt or idempotency_key).
	// Python hashes and keeps a stored record as json.loads gives it, so a
	// member still absent and still at the decoder's default is written
	// and hashed without it, or the writer's chain would not verify. A
	// record built in Go lacks none.
	absent memberSet

	// attemptRead keeps the attempt member as read when it is not the
	// integer literal Attempt is written as (null, 2.0, 0, 2.5, "2",
	// true, a list or any other JSON value from another writer): Python
	// hashes a stored record as json.loads gives it, so the record is
	// written and hashed with that value, while Attempt gives Go callers
	// a usable integer. Setting Attempt to another number replaces it.
	attemptRead keptAttempt

	// startedRead and endedRead keep started_at and ended_at as read when
	// the text is not what StartedAt or EndedAt is written as: Python's
	// StepRecord holds plain strings and hashes them as given, so a
	// record from another writer ("…Z", a naive time) must be written and
	// hashed with that text, or its chain would not verify. Setting the
	// field to another instant replaces it. Nil when nothing is kept (the
	// common case costs a pointer); never modified, so copies share it.
	startedRead, endedRead *keptTime

	// Extra keeps members written by newer peers, so a record read and
	// re-encoded (or hashed) keeps them.
	Extra map[string]any

	// Seq is the store-assigned 1-based position in the run's ledger. It
	// is not part of the record JSON.
	Seq int64
}

// Derived returns a shallow copy of r for a new record made from it (a
// cancelled end of a STARTED record read back): it writes every member,
// whatever members r (or its effect) was read without, and attempt as the integer
// Attempt, however r spelled it. started_at and ended_at stay as read
// until set, as a Python record finished in place keeps its started_at.
func (r *StepRecord) Derived() StepRecord {
	c := *r
	c.absent = 0
	c.attemptRead = keptAttempt{}
	if r.Effect != nil && r.Effect.absent != 0 {
		e := *r.Effect
		e.absent = 0
		c.Effect = &e
	}
	return c
}

// Clone returns a deep copy of s, timestamps kept as read included.
func (s *StepRecord) Clone() *StepRecord {
	c := *s
	c.Effect = s.Effect.Clone()
	c.Result = pyjson.Clone(s.Result)
	c.attemptRead.wire = pyjson.Clone(s.attemptRead.wire)
	c.Extra = pyjson.CloneObject(s.Extra)
	return &c
}

// JSONValue returns the record as an ordered wire object (Python key
// order). withHash=false drops record_hash and signature: the text the
// hash chain hashes. Members the record was read without are left out
// while they hold the decoder's default (see absent); prev_hash never is,
// as Python's chain sets it before hashing.
func (s *StepRecord) JSONValue(withHash bool) pyjson.Ordered {
	o := make(pyjson.Ordered, 0, 16+len(s.Extra))
	member := func(m memberSet, key string, v any) {
		if s.writes(m, v) {
			o = append(o, pyjson.KV{Key: key, Value: v})
		}
	}
	member(recRunID, "run_id", s.nullRead.str(nullRunID, s.RunID))
	member(recStepID, "step_id", s.nullRead.str(nullStepID, s.StepID))
	member(recNodeID, "node_id", s.nullRead.str(nullNodeID, s.NodeID))
	member(recStatus, "status", s.nullRead.str(nullStatus, string(s.Status)))
	member(recEffect, "effect", s.Effect.JSONValue())
	member(recResult, "result", s.Result)
	member(recError, "error", s.emptyNotNull.str(emptyError, s.Error))
	member(recStartedAt, "started_at", s.startedRead.jsonValue(s.StartedAt))
	member(recEndedAt, "ended_at", s.endedRead.jsonValue(s.EndedAt))
	member(recActorID, "actor_id", s.emptyNotNull.str(emptyActor, s.ActorID))
	member(recSessionID, "session_id", s.emptyNotNull.str(emptySession, s.SessionID))
	member(recAttempt, "attempt", s.attemptValue())
	member(recIdempotencyKey, "idempotency_key", s.emptyNotNull.str(emptyIdempotencyKey, s.IdempotencyKey))
	o = append(o, pyjson.KV{Key: "prev_hash", Value: s.emptyNotNull.str(emptyPrevHash, s.PrevHash)})
	if withHash {
		member(recRecordHash, "record_hash", nullString(s.RecordHash))
		member(recSignature, "signature", nullString(s.Signature))
	}
	for _, k := range pyjson.SortedKeys(s.Extra) {
		o = append(o, pyjson.KV{Key: k, Value: s.Extra[k]})
	}
	return o
}

// SetPrevHash sets the hash of the record before this one, "" for none,
// which is written as null whatever prev_hash the record was read with:
// the link a chaining store gives a record it appends.
func (s *StepRecord) SetPrevHash(h string) {
	s.PrevHash = h
	s.emptyNotNull &^= emptyPrevHash
}

// PrevHashEmptyNotNull reports whether the record holds prev_hash "" rather
// than null: it was read so and PrevHash is still "". Python tells the two
// apart when it checks a chain's links.
func (s *StepRecord) PrevHashEmptyNotNull() bool {
	return s.PrevHash == "" && s.emptyNotNull&emptyPrevHash != 0
}

// attemptValue is the wire value of attempt: a copy of the value read
// while Attempt still holds what was read from it (copies of s share the
// value, see keptAttempt), else Attempt, 0 written as 1 (the default of a
// record built without one).
func (s *StepRecord) attemptValue() any {
	if v, ok := s.attemptRead.value(s.Attempt); ok {
		return pyjson.Clone(v)
	}
	if s.Attempt == 0 {
		return 1
	}
	return s.Attempt
}

// keptAttempt is an attempt member read in another spelling than the
// integer literal of the Attempt read from it (see StepRecord.attemptRead).
// wire is never modified in place nor handed out, so struct copies of a
// record share it; RecordFromJSON keeps its caller's value there.
type keptAttempt struct {
	wire any // the JSON value read: null, a json.Number, a string, a list…
	from int // the Attempt read from wire
	ok   bool
}

// keepAttempt returns what to keep of the attempt member v, read as
// attempt: nothing when writing attempt gives v back (its integer literal,
// or a Go integer of that value), or when v is a finite float64 that fits
// an integer (encoding/json's, whose literal is lost: written as the
// integer, as before); v itself otherwise.
func keepAttempt(v any, attempt int) keptAttempt {
	switch x := v.(type) {
	case json.Number:
		if attempt != 0 && string(x) == strconv.Itoa(attempt) {
			return keptAttempt{}
		}
	case int:
		if attempt != 0 && x == attempt {
			return keptAttempt{}
		}
	case int64:
		if attempt != 0 && x == int64(attempt) {
			return keptAttempt{}
		}
	case float64:
		if _, ok := floatInt(x); ok {
			return keptAttempt{}
		}
	}
	return keptAttempt{wire: v, from: attempt, ok: true}
}

// attemptInt is the Attempt of an attempt member v: Python's int(v) where
// that is an integer that fits a Go int, else 1 (see StepRecord.Attempt).
func attemptInt(v any) int {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int:
		return x
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x)
		}
	case float64:
		if i, ok := floatInt(x); ok {
			return i
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 0); err == nil {
			return int(i)
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			if i, ok := floatInt(f); ok {
				return i
			}
		}
	case string:
		if i, ok := pyIntText(x); ok {
			return i
		}
	}
	return 1
}

// floatInt is f cut toward zero, as Python's int() does, when f is
// finite and the result fits a Go int.
func floatInt(f float64) (int, bool) {
	// -2^63 is an int64, 2^63 is not; NaN fails both comparisons.
	if !(f >= math.MinInt && f < math.MaxInt) {
		return 0, false
	}
	return int(f), true
}

// pyIntText parses s as Python's int(s) does in base 10, limited to ASCII
// digits: surrounding white space, an optional sign, digits with single
// underscores between them. It reports false for any other text (Python
// raises ValueError) and for a value past the Go int range.
func pyIntText(s string) (int, bool) {
	s = pyval.Strip(s)
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c == '_' && i > 0 && i < len(digits)-1 && digits[i-1] != '_' {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(s[:len(s)-len(digits)]+strings.ReplaceAll(digits, "_", ""), 10, 0)
	if err != nil {
		return 0, false
	}
	return int(i), true
}

// value returns the value read, unless a caller has set Attempt, now
// attempt, to something else since.
func (k keptAttempt) value(attempt int) (any, bool) {
	if !k.ok || attempt != k.from {
		return nil, false
	}
	return k.wire, true
}

// keptTime is a timestamp member read in another spelling than the
// isoformat of the Time read from it (see StepRecord.startedRead).
type keptTime struct {
	text string // the string read
	from Time   // the Time read from text; zero when ParseTime refuses it
}

// readTime reads the timestamp member key of value v: its Time, and what
// to keep of v, which is nothing when writing the Time gives v back. A
// string ParseTime cannot read gives the zero Time and is kept, not
// refused, as Python's StepRecord takes any string; null is the zero
// Time. Any other value is an error.
func readTime(key string, v any) (Time, *keptTime, error) {
	s, err := asString(key, v)
	if err != nil || v == nil {
		return Time{}, nil, err
	}
	t, err := ParseTime(s)
	var buf [40]byte
	if err == nil && string(appendTime(buf[:0], t.Time)) == s {
		return t, nil, nil
	}
	return t, &keptTime{text: s, from: t}, nil
}

// value returns the text read, unless a caller has set the field, now t,
// to another instant since.
func (k *keptTime) value(t Time) (string, bool) {
	if k == nil || !t.Equal(k.from.Time) {
		return "", false
	}
	return k.text, true
}

// jsonValue is the wire value of the field holding t: the text read while
// t is what was read from it, else t's.
func (k *keptTime) jsonValue(t Time) any {
	if text, ok := k.value(t); ok {
		return text
	}
	return t.jsonValue()
}

// stored is the field holding t, kept as k, as it reads back once written:
// the Time and text read while t is unchanged, else t as NewTime gives it
// and nothing kept.
func (k *keptTime) stored(t Time) (Time, *keptTime) {
	if _, ok := k.value(t); ok {
		return k.from, k
	}
	n := NewTime(t.Time)
	if !t.IsZero() && t.Time.Before(minWireTime.Add(time.Microsecond)) {
		// An instant before 0001-01-01T00:00:00.000001 UTC is written as
		// "0001-01-01T00:00:00+00:00" (FormatTime clamps), which reads
		// back as NewTime's 00:00:00.000001 with the text kept: the copy
		// keeps it too, or it would write (and hash) another text than
		// the one written. Only there do the two differ, so the hot path
		// formats nothing.
		return n, &keptTime{text: FormatTime(t.Time), from: n}
	}
	return n, nil
}

// textOf is the text kept, "" when none is.
func (k *keptTime) textOf() string {
	if k == nil {
		return ""
	}
	return k.text
}

// writes reports whether member m, of wire value v, is written: unless
// the record was read without it and v is still what the decoder put in
// its place (null, "", attempt 1).
func (s *StepRecord) writes(m memberSet, v any) bool {
	if s.absent&m == 0 {
		return true
	}
	switch v {
	case nil, "":
		return false
	}
	return m != recAttempt || v != any(1)
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

// UnmarshalRecord decodes one ledger record. Of a repeated key the last
// value counts, as in Python.
func UnmarshalRecord(data []byte) (*StepRecord, error) {
	s := &StepRecord{Attempt: 1, absent: allRecordMembers}
	l := lastWins{to: s}
	if err := l.result(pyjson.DecodeObjectFunc(data, l.member)); err != nil {
		return nil, fmt.Errorf("decoding ledger record: %w", err)
	}
	return s, nil
}

// RecordFromJSON builds a StepRecord from a decoded JSON object. Unknown
// status strings and effect types are kept (foreign ledgers may use them).
func RecordFromJSON(m map[string]any) (*StepRecord, error) {
	s := &StepRecord{Attempt: 1, absent: allRecordMembers}
	for k, v := range m {
		if err := s.set(k, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// set assigns one member of the wire object, replacing what an earlier
// occurrence of the key set; unknown keys go to Extra.
func (s *StepRecord) set(key string, v any) error {
	var err error
	var m memberSet
	switch key {
	case "run_id":
		m = recRunID
		s.RunID, err = asString(key, v)
		s.nullRead.note(nullRunID, v)
	case "step_id":
		m = recStepID
		s.StepID, err = asString(key, v)
		s.nullRead.note(nullStepID, v)
	case "node_id":
		m = recNodeID
		s.NodeID, err = asString(key, v)
		s.nullRead.note(nullNodeID, v)
	case "status":
		m = recStatus
		var st string
		st, err = asString(key, v)
		s.Status = StepStatus(st)
		s.nullRead.note(nullStatus, v)
	case "effect":
		m = recEffect
		s.Effect, err = decodeEffect(v)
		if _, obj := v.(map[string]any); err != nil && obj {
			// A member's error names the member alone ("type"): say
			// whose it is.
			err = fmt.Errorf("effect: %w", err)
		}
	case "result":
		m = recResult
		s.Result = v
	case "error":
		m = recError
		s.Error, err = asString(key, v)
		s.emptyNotNull.note(emptyError, v)
	case "started_at":
		m = recStartedAt
		s.StartedAt, s.startedRead, err = readTime(key, v)
	case "ended_at":
		m = recEndedAt
		s.EndedAt, s.endedRead, err = readTime(key, v)
	case "actor_id":
		m = recActorID
		s.ActorID, err = asString(key, v)
		s.emptyNotNull.note(emptyActor, v)
	case "session_id":
		m = recSessionID
		s.SessionID, err = asString(key, v)
		s.emptyNotNull.note(emptySession, v)
	case "attempt":
		m = recAttempt
		// Any JSON value is kept, as Python's stores keep it unchecked.
		s.Attempt = attemptInt(v)
		s.attemptRead = keepAttempt(v, s.Attempt)
	case "idempotency_key":
		m = recIdempotencyKey
		s.IdempotencyKey, err = asString(key, v)
		s.emptyNotNull.note(emptyIdempotencyKey, v)
	case "prev_hash":
		s.PrevHash, err = asString(key, v)
		s.emptyNotNull.note(emptyPrevHash, v)
	case "record_hash":
		m = recRecordHash
		s.RecordHash, err = asString(key, v)
	case "signature":
		m = recSignature
		s.Signature, err = asString(key, v)
	default:
		if s.Extra == nil {
			s.Extra = map[string]any{}
		}
		s.Extra[key] = v
	}
	s.absent &^= m
	return err
}

// memberSet is a set of StepRecord's wire members. prev_hash has no
// bit: it is always written (see JSONValue).
type memberSet uint16

const (
	recRunID memberSet = 1 << iota
	recStepID
	recNodeID
	recStatus
	recEffect
	recResult
	recError
	recStartedAt
	recEndedAt
	recActorID
	recSessionID
	recAttempt
	recIdempotencyKey
	recRecordHash
	recSignature

	allRecordMembers = recSignature<<1 - 1
)

// emptyFields is a set of string fields read as "" rather than null.
type emptyFields uint8

const (
	emptyError emptyFields = 1 << iota
	emptyActor
	emptySession
	emptyResultKey
	emptyParent
	emptyIdempotencyKey
	emptyPrevHash
)

// nullFields is a set of string fields read as null rather than a string.
type nullFields uint8

const (
	nullRunID nullFields = 1 << iota
	nullStepID
	nullNodeID
	nullStatus
)

// note adds f when the JSON value v read for it is null, and removes it
// otherwise: of a repeated key the last value counts.
func (n *nullFields) note(f nullFields, v any) {
	if v == nil {
		*n |= f
	} else {
		*n &^= f
	}
}

// str is the JSON value of field f holding s: s, or null for "" when null
// was what was read.
func (n nullFields) str(f nullFields, s string) any {
	if s == "" && n&f != 0 {
		return nil
	}
	return s
}

// note adds f when the JSON value v read for it is "", and removes it
// otherwise: of a repeated key the last value counts.
func (e *emptyFields) note(f emptyFields, v any) {
	if v == "" {
		*e |= f
	} else {
		*e &^= f
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
