// Package frozen holds JSON values, runs and ledger records compactly for
// stores that keep them in memory (the in-memory store, the JSON store's
// run cache, the SQLite store's cache of hot ledgers).
//
// Freezing packs a deep copy of a value into one string: a tag byte per
// value, lengths as varints, the bytes of keys, strings and numbers
// inline. Thawing decodes a fresh deep copy with ordinary maps and slices
// whose strings are substrings of the packed one, so they cost no copy.
// The frozen copy isolates its keeper from the callers as pyjson.Clone
// does, in one allocation that holds no pointer: the collector never scans
// it, which matters for a store that keeps thousands of runs while its
// kernel allocates (a tree of small maps and slices is scanned at every
// cycle), and what a process keeps it must fault in page by page
// (docs/benchmarks.md, the page_first_touch ceiling).
//
// Values of Go types the decoder never gives (ints, float64, typed slices,
// ...) are kept aside and shared, as Clone shares them.
//
// A frozen value is never changed once made, so readers may thaw it
// without the keeper's lock.
package frozen

import (
	"encoding/json"
	"sync"
)

// Value is a frozen JSON value. The zero Value is JSON null.
type Value struct {
	data  string // the packing; "" for the zero Value
	other []any  // values of other types, referenced by index from data
}

// Object is a frozen map[string]any. The zero Object stands for a nil map.
type Object struct{ v Value }

// Tags: one byte before every packed value.
const (
	tagNull      = iota // nil
	tagFalse            // false
	tagTrue             // true
	tagString           // string: uvarint length, bytes
	tagNumber           // json.Number: uvarint length, bytes
	tagObject           // map[string]any: uvarint count, then count × (uvarint key length, key, value)
	tagArray            // []any: uvarint count, then count values
	tagNilObject        // map[string]any(nil) inside a value
	tagNilArray         // []any(nil)
	tagOther            // any other type: uvarint index into Value.other
)

// packer builds one packing; packers are pooled so that their buffers are
// reused and a freeze allocates only its result.
type packer struct {
	buf   []byte
	other []any
}

var packers = sync.Pool{New: func() any { return &packer{buf: make([]byte, 0, 1024)} }}

func getPacker() *packer { return packers.Get().(*packer) }

// finish returns the packing and returns the packer to the pool.
func (p *packer) finish() Value {
	v := Value{data: string(p.buf)}
	if len(p.other) > 0 {
		v.other = append([]any(nil), p.other...)
	}
	p.release()
	return v
}

func (p *packer) release() {
	if cap(p.buf) > 64<<10 {
		return // a huge one-off value: let its buffer go
	}
	clear(p.other)
	p.buf, p.other = p.buf[:0], p.other[:0]
	packers.Put(p)
}

func (p *packer) uvarint(n int) {
	for n >= 0x80 {
		p.buf = append(p.buf, byte(n)|0x80)
		n >>= 7
	}
	p.buf = append(p.buf, byte(n))
}

// header starts a value: its tag, then a length or a count.
func (p *packer) header(tag byte, n int) {
	p.buf = append(p.buf, tag)
	p.uvarint(n)
}

func (p *packer) text(tag byte, s string) {
	p.header(tag, len(s))
	p.buf = append(p.buf, s...)
}

func (p *packer) keep(v any) {
	p.header(tagOther, len(p.other))
	p.other = append(p.other, v)
}

// value packs v exactly: JSON types by value, other types kept aside.
func (p *packer) value(v any) {
	switch x := v.(type) {
	case nil:
		p.buf = append(p.buf, tagNull)
	case bool:
		if x {
			p.buf = append(p.buf, tagTrue)
		} else {
			p.buf = append(p.buf, tagFalse)
		}
	case string:
		p.text(tagString, x)
	case json.Number:
		p.text(tagNumber, string(x))
	case map[string]any:
		p.object(x)
	case []any:
		if x == nil {
			p.buf = append(p.buf, tagNilArray)
			return
		}
		p.header(tagArray, len(x))
		for _, e := range x {
			p.value(e)
		}
	default:
		p.keep(v)
	}
}

func (p *packer) object(m map[string]any) {
	if m == nil {
		p.buf = append(p.buf, tagNilObject)
		return
	}
	p.header(tagObject, len(m))
	for k, e := range m {
		p.uvarint(len(k))
		p.buf = append(p.buf, k...)
		p.value(e)
	}
}

// Freeze returns a frozen deep copy of v.
func Freeze(v any) Value {
	p := getPacker()
	p.value(v)
	return p.finish()
}

// FreezeObject returns a frozen deep copy of m.
func FreezeObject(m map[string]any) Object {
	if m == nil {
		return Object{}
	}
	p := getPacker()
	p.object(m)
	return Object{p.finish()}
}

// unpacker reads a packing from its start.
type unpacker struct {
	data  string
	other []any
	pos   int
}

func (u *unpacker) uvarint() int {
	var n int
	for shift := 0; ; shift += 7 {
		b := u.data[u.pos]
		u.pos++
		n |= int(b&0x7f) << shift
		if b < 0x80 {
			return n
		}
	}
}

func (u *unpacker) text() string {
	n := u.uvarint()
	s := u.data[u.pos : u.pos+n]
	u.pos += n
	return s
}

// value decodes the next value into new maps and slices.
func (u *unpacker) value() any {
	tag := u.data[u.pos]
	u.pos++
	switch tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagString:
		return u.text()
	case tagNumber:
		return json.Number(u.text())
	case tagObject:
		return u.members()
	case tagArray:
		out := make([]any, u.uvarint())
		for i := range out {
			out[i] = u.value()
		}
		return out
	case tagNilObject:
		return map[string]any(nil)
	case tagNilArray:
		return []any(nil)
	case tagOther:
		return u.other[u.uvarint()]
	}
	panic("frozen: corrupt packing") // only this package writes them
}

// members decodes an object's members after its tag.
func (u *unpacker) members() map[string]any {
	n := u.uvarint()
	out := make(map[string]any, n)
	for range n {
		k := u.text()
		out[k] = u.value()
	}
	return out
}

// skip moves past the next value without decoding it.
func (u *unpacker) skip() {
	tag := u.data[u.pos]
	u.pos++
	switch tag {
	case tagString, tagNumber:
		u.pos += u.uvarint()
	case tagObject:
		for n := u.uvarint(); n > 0; n-- {
			u.pos += u.uvarint()
			u.skip()
		}
	case tagArray:
		for n := u.uvarint(); n > 0; n-- {
			u.skip()
		}
	case tagOther:
		u.uvarint()
	}
}

// Thaw returns a new deep copy, with maps and slices, of the value frozen.
func (v Value) Thaw() any {
	if v.data == "" {
		return nil
	}
	u := unpacker{data: v.data, other: v.other}
	return u.value()
}

// Thaw returns a new map holding a deep copy of o.
func (o Object) Thaw() map[string]any {
	if o.v.data == "" {
		return nil
	}
	m, _ := o.v.Thaw().(map[string]any)
	return m
}

// Get returns a thawed copy of the value of key.
func (o Object) Get(key string) (any, bool) {
	if o.v.data == "" || o.v.data[0] != tagObject {
		return nil, false
	}
	u := unpacker{data: o.v.data, other: o.v.other, pos: 1}
	for n := u.uvarint(); n > 0; n-- {
		if u.text() == key {
			return u.value(), true
		}
		u.skip()
	}
	return nil, false
}
