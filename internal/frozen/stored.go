package frozen

import (
	"errors"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// FreezeNormalized returns Freeze(pyjson.Normalize(v)) in one pass: a
// frozen copy of v in the Go types a decode of its encoding gives, without
// building the normalized maps first.
func FreezeNormalized(v any) (Value, error) { return freezeNormalizedAt(v, 0) }

// freezeNormalizedAt is FreezeNormalized of a value depth levels down in
// its document, whose nesting limit counts from the document's root.
func freezeNormalizedAt(v any, depth int) (Value, error) {
	p := getPacker()
	if err := p.normalized(v, depth); err != nil {
		p.release()
		return Value{}, err
	}
	return p.finish(), nil
}

// FreezeNormalizedObject is FreezeNormalized for an object; nil gives an
// empty object, as pyjson.NormalizeObject gives an empty map.
func FreezeNormalizedObject(m map[string]any) (Object, error) { return freezeNormalizedObjectAt(m, 0) }

func freezeNormalizedObjectAt(m map[string]any, depth int) (Object, error) {
	p := getPacker()
	if err := p.normalizedObject(m, depth); err != nil {
		p.release()
		return Object{}, err
	}
	return Object{p.finish()}, nil
}

// errTooDeep refuses a value nested past pyjson.MaxDepth (a cycle too):
// the encoders refuse it, so no durable store could keep it. Callers that
// name paths ask the encoder for its error.
var errTooDeep = errors.New("nesting too deep")

// normalized packs what pyjson.Normalize(v) would give; v is depth levels
// down in its document.
func (p *packer) normalized(v any, depth int) error {
	if depth > pyjson.MaxDepth { // any value, as the encoders and the decoder count
		return errTooDeep
	}
	switch x := v.(type) {
	case map[string]any:
		return p.normalizedObject(x, depth)
	case []any:
		p.header(tagArray, len(x))
		for _, e := range x {
			if err := p.normalized(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case string:
		if utf8.ValidString(x) { // the common case, without Normalize's call
			p.text(tagString, x)
			return nil
		}
	case nil, bool:
		p.value(v)
		return nil
	}
	// Other scalars are packed once normalized (numbers become
	// json.Number, invalid UTF-8 is replaced); other Go types take
	// Normalize's encode-and-decode path, at v's depth, as a typed slice
	// nests too.
	n, err := pyjson.NormalizeMember(v, depth)
	if err != nil {
		return err
	}
	p.value(n)
	return nil
}

func (p *packer) normalizedObject(m map[string]any, depth int) error {
	if depth > pyjson.MaxDepth {
		return errTooDeep
	}
	start, others := len(p.buf), len(p.other)
	p.header(tagObject, len(m))
	for k, e := range m {
		if !utf8.ValidString(k) { // Normalize re-encodes the whole object
			clear(p.other[others:])
			p.buf, p.other = p.buf[:start], p.other[:others]
			n, err := pyjson.NormalizeObjectMember(m, depth)
			if err != nil {
				return err
			}
			// Its keys are valid now: packed (and its depth counted from
			// the document's root) as any other.
			return p.normalizedObject(n, depth)
		}
		p.uvarint(len(k))
		p.buf = append(p.buf, k...)
		if err := p.normalized(e, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// NewStoredRecord returns NewRecord(r.StoredCopy()) with its Seq set to
// seq, in one pass over r's JSON values: what a store that serves ledger
// reads from memory keeps, so that a hot read equals a read from disk.
func NewStoredRecord(r *durable.StepRecord, seq int64) (*Record, error) {
	head, ok := r.StoredHead()
	if !ok {
		c, err := r.StoredCopy()
		if err != nil {
			return nil, err
		}
		c.Seq = seq
		return NewRecord(c), nil
	}
	head.Seq = seq
	f := &Record{head: head}
	// At the depths the record's JSON holds them (extra members are the
	// record's own).
	var err error
	f.result, err = freezeNormalizedAt(r.Result, 1)
	if err == nil && len(r.Extra) > 0 {
		f.extra, err = freezeNormalizedObjectAt(r.Extra, 0)
	}
	if err == nil && head.Effect != nil {
		f.hasEffect = true
		f.effect = *head.Effect
		f.effect.Payload = nil // kept frozen in f.payload
		f.head.Effect = nil
		f.payload, err = freezeNormalizedObjectAt(r.Effect.Payload, 2)
	}
	if err != nil {
		if _, encErr := durable.MarshalRecord(r, pyjson.Line); encErr != nil {
			err = encErr // the encoder's error names the path of the value it refuses
		}
		return nil, err
	}
	return f, nil
}

// NewStoredRun returns NewRun(r.StoredCopy()) in one pass over r's JSON
// values: what a store that serves run reads from memory keeps, so that a
// hot read equals a read from disk. An r that cannot be encoded is an
// error naming the offending value's path.
func NewStoredRun(r *durable.RunState) (Run, error) {
	head, ok := r.StoredHead()
	if !ok {
		c, err := r.StoredCopy()
		if err != nil {
			return Run{}, err
		}
		return NewRun(c), nil
	}
	f := Run{head: head}
	var err error
	// At the depths the run's JSON holds them.
	if f.vars, err = freezeNormalizedObjectAt(r.Vars, 1); err == nil && r.Output != nil {
		f.output, err = freezeNormalizedObjectAt(r.Output, 1)
	}
	if err == nil && r.Waiting != nil && r.Waiting.Details != nil {
		f.details, err = freezeNormalizedObjectAt(r.Waiting.Details, 2)
	}
	if err != nil {
		if _, encErr := durable.MarshalRun(r, pyjson.Line); encErr != nil {
			err = encErr // the encoder's error names the path of the value it refuses
		}
		return Run{}, err
	}
	return f, nil
}
