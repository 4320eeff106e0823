package sqlite

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzRedoScanReadsAPrefix writes three records to a redo log, then
// leaves the file whole, cuts it or flips one of its bytes, as a power cut
// or a bad sector would. A scan must return exactly the records written
// before the damage, in order and unchanged, and never a record built
// from damaged bytes; damage to the magic is an error.
func FuzzRedoScanReadsAPrefix(f *testing.F) {
	f.Add([]byte("first"), []byte(""), []byte("third record"), uint8(0), uint16(0))
	f.Add([]byte("a"), []byte("bb"), []byte("ccc"), uint8(1), uint16(40))
	f.Add([]byte("a"), []byte("bb"), []byte("ccc"), uint8(2), uint16(3))
	f.Add([]byte("a"), []byte("bb"), []byte("ccc"), uint8(2), uint16(12))
	f.Add(bytes.Repeat([]byte{0xff}, 300), []byte{0}, []byte("x"), uint8(2), uint16(20))
	// One file for every input (rewritten each time): a new file per input
	// would make the fuzzer measure the file system.
	path := filepath.Join(f.TempDir(), "db"+redoSuffix)
	f.Fuzz(func(t *testing.T, a, b, c []byte, mode uint8, at uint16) {
		const firstLSN = 7
		rf, err := openRedoFile(path, firstLSN, false)
		if err != nil {
			t.Fatal(err)
		}
		written := [][]byte{a, b, c}
		ends := make([]int, len(written)) // where each record ends in the file
		end := redoHeaderSize
		for i, p := range written {
			if _, err := rf.append(p); err != nil {
				t.Fatal(err)
			}
			end += redoRecordHead + len(p)
			ends[i] = end
		}
		if err := rf.close(); err != nil {
			t.Fatal(err)
		}
		file := readFile(t, path)
		if len(file) < end {
			t.Fatalf("log of %d bytes, records end at %d", len(file), end)
		}
		file = file[:end] // openRedoFile may leave bytes past the records; they are not this test's

		want, wantErr := len(written), false
		switch mode % 3 {
		case 1: // cut: the records wholly before the cut survive
			cut := int(at) % (end + 1)
			file = file[:cut]
			want = 0
			for _, e := range ends {
				if e <= cut {
					want++
				}
			}
		case 2: // flip: the records before the damaged one survive
			pos := int(at) % end
			file[pos] ^= 0xa5
			switch {
			case pos < len(redoMagic):
				wantErr = true
			case pos < redoHeaderSize:
				want = 0 // the header's LSN no longer matches the first record's
			default:
				want = 0
				for _, e := range ends {
					if e <= pos {
						want++
					}
				}
			}
		}
		writeFile(t, path, file)

		var got [][]byte
		next, err := redoScan(path, func(lsn int64, payload []byte) error {
			if lsn != firstLSN+int64(len(got)) {
				t.Fatalf("record %d has LSN %d, want %d", len(got), lsn, firstLSN+int64(len(got)))
			}
			got = append(got, append([]byte(nil), payload...))
			return nil
		})
		if wantErr {
			if err == nil {
				t.Fatalf("a log with a damaged magic scanned without error (%d records)", len(got))
			}
			return
		}
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if len(got) != want {
			t.Fatalf("scan returned %d records, want %d (mode %d, at %d, file %d bytes)", len(got), want, mode%3, at, len(file))
		}
		for i := range got {
			if !bytes.Equal(got[i], written[i]) {
				t.Fatalf("record %d: got %q, wrote %q", i, got[i], written[i])
			}
		}
		if want > 0 && next != firstLSN+int64(want) {
			t.Fatalf("next LSN %d after %d records from %d", next, want, firstLSN)
		}
	})
}

// FuzzRedoOpDecode feeds arbitrary payloads to the decoder of commit and
// append records: it must not panic, and what it accepts must encode to
// a payload that decodes to the same op.
func FuzzRedoOpDecode(f *testing.F) {
	seed := &redoOp{runID: "r1", create: true, run: []any{"a", int64(-3), nil, []byte{1, 2}, 1.5},
		firstSeq: 4, recs: []encodedRecord{{json: `{"x":1}`, completedKey: "k"}, {json: "{}", completedKey: nil}},
		deadline: 1, wait: []any{"r1", "2026-12-01T00:00:00+00:00"}}
	var e redoEncoder
	if err := seed.encode(&e); err != nil {
		f.Fatal(err)
	}
	f.Add(e.b)
	f.Add([]byte{redoAppend, 2, 'r', '1', 0, 0, 0})
	f.Add([]byte{redoCommit, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) == 0 || (payload[0] != redoCommit && payload[0] != redoAppend) {
			return
		}
		op, err := decodeRedoOp(payload[0], &redoDecoder{b: payload[1:]})
		if err != nil {
			return
		}
		var e redoEncoder
		if err := op.encode(&e); err != nil {
			t.Fatalf("a decoded op does not encode: %v", err)
		}
		again, err := decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]})
		if err != nil {
			t.Fatalf("re-encoded op does not decode: %v", err)
		}
		if !sameOp(op, again) {
			t.Fatalf("decode(encode(op)) = %+v, op %+v", again, op)
		}
	})
}

// TestRedoOpRoundTrip encodes ops of every value type and reads them back.
func TestRedoOpRoundTrip(t *testing.T) {
	for _, op := range []*redoOp{
		{runID: "run", create: true, run: []any{"s", int64(math.MinInt64), int64(math.MaxInt64), nil, []byte{}, []byte{0, 255}, 0.1, math.Inf(-1)},
			firstSeq: 1, recs: []encodedRecord{{json: "{}", completedKey: ""}}, deadline: 1, wait: []any{"run", int64(5)}},
		{runID: "run", run: []any{"é"}, firstSeq: 9, deadline: 2},
		{runID: "", firstSeq: -1, recs: []encodedRecord{{json: "", completedKey: nil}}},
	} {
		var e redoEncoder
		if err := op.encode(&e); err != nil {
			t.Fatal(err)
		}
		got, err := decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]})
		if err != nil {
			t.Fatal(err)
		}
		if !sameOp(op, got) {
			t.Fatalf("round trip: got %+v, want %+v", got, op)
		}
		// Every cut of a valid payload is refused, not half-read.
		for n := 1; n < len(e.b); n++ {
			if _, err := decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:n]}); err == nil {
				t.Fatalf("a payload cut to %d of %d bytes decoded", n, len(e.b))
			}
		}
	}
}

// sameOp compares ops as the decoder gives them back: floats by their
// bits (NaN included), a nil list and an empty one alike.
func sameOp(a, b *redoOp) bool {
	return a.runID == b.runID && a.create == b.create && sameValues(a.run, b.run) &&
		a.firstSeq == b.firstSeq && len(a.recs) == len(b.recs) && a.deadline == b.deadline &&
		sameValues(a.wait, b.wait) && func() bool {
		for i := range a.recs {
			if a.recs[i].json != b.recs[i].json || !sameValues([]any{a.recs[i].completedKey}, []any{b.recs[i].completedKey}) {
				return false
			}
		}
		return true
	}()
}

func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		fa, aok := a[i].(float64)
		fb, bok := b[i].(float64)
		if aok || bok {
			if !aok || !bok || math.Float64bits(fa) != math.Float64bits(fb) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRedoValuesKeepWideIntegers guards the encoding of a Go int bound
// to a statement: it is read back as the same int64, all 64 bits.
func TestRedoValuesKeepWideIntegers(t *testing.T) {
	for _, v := range []int{math.MaxInt, math.MinInt, 1 << 40, -1} {
		var e redoEncoder
		if err := e.value(v); err != nil {
			t.Fatal(err)
		}
		d := &redoDecoder{b: e.b}
		if got := d.value(); d.err != nil || got != int64(v) || len(d.b) != 0 {
			t.Fatalf("int %d read back as %#v (%v, %d bytes left)", v, got, d.err, len(d.b))
		}
	}
}

// TestRedoValuesEndingThePayloadDecode: a list of values may end a
// record's payload (a recorded statement's arguments are its last bytes),
// with nothing after it. A list whose items are one byte each (NULLs), an
// empty list, and a float as the very last 8 bytes must decode, not be
// taken for a list or a float running past the payload.
func TestRedoValuesEndingThePayloadDecode(t *testing.T) {
	for _, vs := range [][]any{
		{},
		{nil},
		{nil, nil, nil},
		{1.5},
		{"x", math.Inf(1)},
	} {
		var e redoEncoder
		if err := e.values(vs); err != nil {
			t.Fatal(err)
		}
		d := &redoDecoder{b: e.b}
		got := d.values()
		if d.err != nil || len(d.b) != 0 || !sameValues(got, vs) {
			t.Fatalf("values %v at the payload's end decoded as %v (err %v, %d bytes left)", vs, got, d.err, len(d.b))
		}
	}
}
