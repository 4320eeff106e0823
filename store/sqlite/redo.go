package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// The redo log: a file beside the database (Store.path + redoSuffix) in
// which a store that owns its database records every write before, or as,
// it reaches the database file. See redoapply.go for how the store uses it.
//
// Layout: a 16-byte header, the magic then the LSN (log sequence number)
// of the first record, then records back to back:
//
//	u32 payload length | u32 CRC-32C of LSN and payload | u64 LSN | payload
//
// The LSNs of a file's records are consecutive from the header's. A reader
// stops at the first record that is short, fails its checksum or breaks
// the sequence: that is where the writer stopped (a torn write after a
// power cut) or where records of an earlier round of the file begin (the
// file is rewound, not truncated, once the database holds all of it, so
// that its pages stay in the page cache).
const (
	redoSuffix     = "-redo"
	redoMagic      = "AGWREDO1"
	redoHeaderSize = 16
	redoRecordHead = 16
	// redoMaxPayload bounds one record, so that a damaged length field
	// cannot make a reader allocate gigabytes. It is SQLite's default
	// SQLITE_MAX_LENGTH: a larger record could hold a value SQLite refuses,
	// a commit acknowledged that the background apply could never write.
	redoMaxPayload = 1_000_000_000
)

var redoCRC = crc32.MakeTable(crc32.Castagnoli)

// redoFile is the redo log's file, written at explicit offsets.
type redoFile struct {
	f    *os.File
	base int64 // the LSN of the first record since the last rewind
	next int64 // the LSN the next record gets
	off  int64 // where the next record goes
	sync bool  // fdatasync after each append (synchronous=FULL)
	// maxPayload bounds the records append takes: redoMaxPayload (a test
	// lowers it).
	maxPayload int
	buf        []byte
	// syncData makes an append durable: fdatasync (a test fails it).
	syncData func(*os.File) error
}

// redoScan reads the records of the redo log at path in order; a missing
// file has none. It calls fn for each record whose checksum and sequence
// hold, and returns the LSN after the last one.
func redoScan(path string, fn func(lsn int64, payload []byte) error) (next int64, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the redo log: %w", err)
	}
	if len(data) < redoHeaderSize || allZero(data[:redoHeaderSize]) {
		// Created but never written (a FULL store fills a new log with
		// zeros before its header; a kill or a power cut can come in
		// between): nothing to replay. A record is appended only after
		// the header, and the sync that makes it durable covers the
		// header too.
		return 0, nil
	}
	if string(data[:8]) != redoMagic {
		return 0, fmt.Errorf("redo log %s: not a redo log (bad magic)", path)
	}
	next = int64(binary.LittleEndian.Uint64(data[8:16]))
	rest := data[redoHeaderSize:]
	for len(rest) >= redoRecordHead {
		n := binary.LittleEndian.Uint32(rest[0:4])
		sum := binary.LittleEndian.Uint32(rest[4:8])
		lsn := int64(binary.LittleEndian.Uint64(rest[8:16]))
		if n > redoMaxPayload || int64(n) > int64(len(rest)-redoRecordHead) || lsn != next {
			break
		}
		payload := rest[redoRecordHead : redoRecordHead+int(n)]
		if crc32.Update(crc32.Checksum(rest[8:16], redoCRC), redoCRC, payload) != sum {
			break
		}
		if err := fn(lsn, payload); err != nil {
			return 0, err
		}
		next++
		rest = rest[redoRecordHead+int(n):]
	}
	return next, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// syncRedoDir makes the redo log's directory entry durable; a variable
// so that a test can see the call where no tracer can.
var syncRedoDir = atomicfile.SyncDir

// openRedoFile opens (creating) the redo log at path and rewinds it so
// that its next record has LSN next; the caller has applied everything it
// held.
func openRedoFile(path string, next int64, sync bool) (*redoFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the redo log: %w", err)
	}
	r := &redoFile{f: f, sync: sync, syncData: fdatasync, maxPayload: redoMaxPayload}
	if sync {
		if err := r.preallocate(); err != nil {
			_ = f.Close()
			return nil, err
		}
		// The fdatasync of a record does not make the file's directory
		// entry durable (fsync(2)): until its directory is synced, a power
		// cut can lose a new log whole, with every commit acknowledged
		// since the open. Synced once here, before the first commit; this
		// also covers the database and its WAL, created beside it earlier
		// in the open.
		if err := syncRedoDir(filepath.Dir(path)); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("opening the redo log: %w", err)
		}
	}
	if err := r.rewind(next); err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

// redoPreallocated is how much of the file a synchronous=FULL store
// writes with zeros at open: its records then overwrite blocks the file
// already has, so each fdatasync writes data only, not the file's new size
// and extents as well (which doubled the cost of a commit here).
const redoPreallocated = redoRewindBytes + 1<<20

func (r *redoFile) preallocate() error {
	st, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("preallocating the redo log: %w", err)
	}
	if st.Size() >= redoPreallocated {
		return nil
	}
	zeros := make([]byte, 1<<20)
	for off := st.Size(); off < redoPreallocated; off += int64(len(zeros)) {
		if _, err := r.f.WriteAt(zeros[:min(int64(len(zeros)), redoPreallocated-off)], off); err != nil {
			return fmt.Errorf("preallocating the redo log: %w", err)
		}
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("preallocating the redo log: %w", err)
	}
	return nil
}

// rewind starts the file over: a new header whose first LSN is next,
// records from the start again. The old records stay on disk until
// overwritten; their LSNs are below next, so no reader takes them for
// new ones. The header needs no sync of its own: should a power cut
// lose it, the old header's LSN does not match the new records, which
// are lost with it, as unsynced commits may be (synchronous=FULL syncs
// it with the first record).
func (r *redoFile) rewind(next int64) error {
	var h [redoHeaderSize]byte
	copy(h[:], redoMagic)
	binary.LittleEndian.PutUint64(h[8:], uint64(next))
	if _, err := r.f.WriteAt(h[:], 0); err != nil {
		return fmt.Errorf("rewinding the redo log: %w", err)
	}
	r.base, r.next, r.off = next, next, redoHeaderSize
	return nil
}

// ErrTooLarge is wrapped by the error of a write whose redo record would
// be over the log's bound of 1e9 bytes (SQLite's own limit on one value):
// nothing of it is written, and the store takes other writes as before.
var ErrTooLarge = errors.New("write too large")

// fits refuses a record of n bytes over the bound.
func (r *redoFile) fits(n int) error {
	if n > r.maxPayload {
		return fmt.Errorf("sqlite: a write whose redo record is %d bytes, over the %d-byte limit: %w", n, r.maxPayload, ErrTooLarge)
	}
	return nil
}

// append writes one record with the next LSN, returns that LSN, and
// syncs the file first when the store is synchronous=FULL.
func (r *redoFile) append(payload []byte) (int64, error) {
	if err := r.fits(len(payload)); err != nil {
		return 0, err
	}
	b := r.buf[:0]
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, 0, 0, 0, 0) // checksum, below
	b = binary.LittleEndian.AppendUint64(b, uint64(r.next))
	b = append(b, payload...)
	binary.LittleEndian.PutUint32(b[4:8], crc32.Checksum(b[8:], redoCRC))
	r.buf = b
	if _, err := r.f.WriteAt(b, r.off); err != nil {
		r.unwrite()
		return 0, fmt.Errorf("writing the redo log: %w", err)
	}
	if r.sync {
		if err := r.syncData(r.f); err != nil {
			r.unwrite()
			return 0, fmt.Errorf("syncing the redo log: %w", err)
		}
	}
	if cap(r.buf) > 1<<20 {
		r.buf = nil // a rare huge record: do not keep its buffer
	}
	lsn := r.next
	r.next++
	r.off += int64(len(b))
	return lsn, nil
}

// unwrite zeroes the head of a record whose append failed, as far as the
// file lets it: the commit is reported failed, and a whole record left in
// the file (written, its sync failed) would otherwise be replayed at the
// next open, committing it after all. The next append overwrites it.
func (r *redoFile) unwrite() {
	var zero [redoRecordHead]byte
	_, _ = r.f.WriteAt(zero[:], r.off)
}

func (r *redoFile) close() error { return r.f.Close() }

// A record's payload is a kind byte and the kind's fields. Values are
// the types the writer statements bind: NULL, text, integers, blobs and
// floats, each a tag byte then its bytes.
const (
	redoStatements byte = 1 // statements run in one transaction (redoStmts)
	redoCommit     byte = 2 // a RunCommit made from the cache (redoCommitOp)
	redoAppend     byte = 3 // a LedgerAppend made from the cache (redoCommitOp without a run)
)

const (
	tagNull byte = iota
	tagText
	tagInt
	tagBlob
	tagFloat
)

// redoEncoder appends values to a payload.
type redoEncoder struct{ b []byte }

func (e *redoEncoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *redoEncoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *redoEncoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

// value appends one bound value; it fails on a type no statement binds.
func (e *redoEncoder) value(v any) error {
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, tagNull)
	case string:
		e.b = append(e.b, tagText)
		e.str(v)
	case int64:
		e.b = append(e.b, tagInt)
		e.varint(v)
	case int:
		e.b = append(e.b, tagInt)
		e.varint(int64(v))
	case []byte:
		e.b = append(e.b, tagBlob)
		e.uvarint(uint64(len(v)))
		e.b = append(e.b, v...)
	case float64:
		e.b = append(e.b, tagFloat)
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
	default:
		return fmt.Errorf("redo log: cannot record a %T", v)
	}
	return nil
}

// values appends a counted list of values.
func (e *redoEncoder) values(vs []any) error {
	e.uvarint(uint64(len(vs)))
	for _, v := range vs {
		if err := e.value(v); err != nil {
			return err
		}
	}
	return nil
}

// redoDecoder reads values back; the first malformed read sets err and
// every later read returns zero values.
type redoDecoder struct {
	b   []byte
	err error
}

func (d *redoDecoder) fail() {
	if d.err == nil {
		d.err = io.ErrUnexpectedEOF
	}
	d.b = nil
}

func (d *redoDecoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *redoDecoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }
func (d *redoDecoder) varint() int64   { return readVarint(d, binary.Varint) }

// readVarint takes a varint off the front of the payload with read
// (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](d *redoDecoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *redoDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *redoDecoder) str() string { return string(d.bytes()) }

// count reads a list's length; a length past what is left (every item
// takes a byte at least) is malformed.
func (d *redoDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

// values reads a list written by redoEncoder.values.
func (d *redoDecoder) values() []any {
	vs := make([]any, d.count())
	for i := range vs {
		vs[i] = d.value()
	}
	return vs
}

func (d *redoDecoder) value() any {
	switch d.byte() {
	case tagNull:
		return nil
	case tagText:
		return d.str()
	case tagInt:
		return d.varint()
	case tagBlob:
		// Never nil: the driver binds a nil []byte as NULL, an empty one
		// as an empty blob, and a replay must bind what the write did.
		b := d.bytes()
		if d.err != nil {
			return nil
		}
		return append([]byte{}, b...)
	case tagFloat:
		if len(d.b) < 8 {
			d.fail()
			return nil
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v
	default:
		if d.err == nil {
			d.err = errors.New("unknown value tag")
		}
		d.b = nil
		return nil
	}
}
