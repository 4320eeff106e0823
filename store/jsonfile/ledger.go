package jsonfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// markEvery is the spacing, in records, of the offsets a ledger keeps so
// that LedgerList(After) starts reading near the cursor.
const markEvery = 64

// ledgerState is what the store knows about a ledger file after one
// scan, kept up to date by its own appends and checked against the file
// (its identity and size) at each use, since another process (Python,
// no runner) may append to it, or delete it, while the store is open.
// Guarded by the run's stripe.
type ledgerState struct {
	file  fileID // the file scanned; zero when there was none
	count int64  // JSON objects in the file: the Seq of the last record
	size  int64  // bytes of the file covered by count
	marks []mark
	// tailOff is where the file's last line starts when it has no '\n'
	// yet (size otherwise), and tailSeq the records before it: a torn
	// line may be one another process is still writing, so a file that
	// grew is read again from there.
	tailOff, tailSeq int64
	// completed maps the idempotency key of each completed record to the
	// seq of the first one, so replay look-ups never scan the file.
	completed map[string]int64
	// head is the file's first bytes (up to headBytes): a file of the same
	// identity that grew but starts otherwise is another file, a deleted
	// ledger's inode number handed out again to a new one.
	head []byte
}

// headBytes is how much of a ledger's start ledgerState.head keeps: past
// a first record's run and step ids, which tell two ledgers of one run
// apart.
const headBytes = 256

// cost estimates the memory st holds, for the cache bound.
func (st *ledgerState) cost() int64 {
	return 128 + int64(len(st.head)) + 16*int64(len(st.marks)) + 80*int64(len(st.completed))
}

func (st *ledgerState) noteCompleted(key string, seq int64) {
	if key == "" {
		return
	}
	if st.completed == nil {
		st.completed = map[string]int64{}
	}
	if _, ok := st.completed[key]; !ok {
		st.completed[key] = seq
	}
}

// mark says that the line starting at byte off is preceded by seq records.
type mark struct{ seq, off int64 }

func (st *ledgerState) addMark(seq, off int64) {
	if n := len(st.marks); n == 0 || seq-st.marks[n-1].seq >= markEvery {
		st.marks = append(st.marks, mark{seq: seq, off: off})
	}
}

// startFor returns the last mark at or before the record after seq.
func (st *ledgerState) startFor(after int64) mark {
	m := mark{}
	for _, mk := range st.marks {
		if mk.seq > after {
			break
		}
		m = mk
	}
	return m
}

// ledgerLocked returns the state of a run's ledger, up to date with the
// file: it is scanned on first use, and again (from where it grew, when
// it only grew) when a stat finds it is not the file last seen. The
// caller holds the run's stripe exclusively.
func (s *Store) ledgerLocked(runID string) (*ledgerState, error) {
	path := s.ledgerPath(runID)
	if st, ok := s.ledgers.Get(runID); ok {
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return s.ledgerOf(runID, path, nil, nil)
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", path, err)
		case st.file == fileIDOf(fi) && st.size == fi.Size():
			return st, nil
		}
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s.ledgerOf(runID, path, nil, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return s.ledgerOf(runID, path, f, fi)
}

// ledgerOf returns the state of a run's ledger brought up to date with f,
// the file open at its path (nil: there is none), of info fi, and caches
// it. The caller holds the run's stripe exclusively.
func (s *Store) ledgerOf(runID, path string, f *os.File, fi fs.FileInfo) (*ledgerState, error) {
	st, ok := s.ledgers.Get(runID)
	if !ok {
		st = &ledgerState{}
	}
	if err := s.syncLedger(path, st, f, fi); err != nil {
		s.forgetLedger(runID)
		return nil, err
	}
	s.ledgers.Put(runID, st, st.cost())
	return st, nil
}

// syncLedger brings st up to date with f (see ledgerOf). A file of the
// same identity that grew is read from st's tail on; any other change (a
// new file, a shorter one) is read whole.
func (s *Store) syncLedger(path string, st *ledgerState, f *os.File, fi fs.FileInfo) error {
	if f == nil {
		if st.size != 0 || st.count != 0 || st.file != (fileID{}) {
			*st = ledgerState{}
		}
		return nil
	}
	id, size := fileIDOf(fi), fi.Size()
	if id == st.file && size == st.size {
		return nil
	}
	from, seq := int64(0), int64(0)
	if id == st.file && size > st.size && sameHead(f, st.head) {
		from, seq = st.tailOff, st.tailSeq
	}
	data, err := readLedgerFrom(f, from, size)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if from > 0 && data[0] != '\n' {
		// Not the line end the last scan ended on: another file under
		// the same identity (a deleted ledger's inode number handed out
		// again). Read it whole.
		from, seq = 0, 0
		if data, err = readLedgerFrom(f, 0, size); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if from == 0 {
		*st = ledgerState{head: bytes.Clone(data[:min(len(data), headBytes)])}
	} else {
		data = data[1:]
		// The torn tail is read again: drop what it gave.
		st.marks = slices.DeleteFunc(st.marks, func(m mark) bool { return m.off >= from })
		if st.count > seq {
			maps.DeleteFunc(st.completed, func(_ string, n int64) bool { return n > seq })
		}
	}
	st.file = id
	s.scanLedger(path, st, data, from, seq)
	return nil
}

// sameHead reports whether f starts with head.
func sameHead(f *os.File, head []byte) bool {
	got := make([]byte, len(head))
	n, _ := f.ReadAt(got, 0)
	return n == len(head) && bytes.Equal(got, head)
}

// readLedgerFrom reads the bytes of f from off to size; from an off past
// 0, it starts a byte earlier, at the '\n' the part before it should end
// with. It returns less when the file has shrunk meanwhile.
func readLedgerFrom(f *os.File, off, size int64) ([]byte, error) {
	if off > 0 {
		off--
	}
	data := make([]byte, max(size-off, 0))
	n, err := f.ReadAt(data, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if off > 0 && n == 0 {
		return []byte{0}, nil // shrunk: no line end there, read whole
	}
	return data[:n], nil
}

// scanLedger indexes data, the ledger's bytes from off on, preceded by
// seq records, into st.
func (s *Store) scanLedger(path string, st *ledgerState, data []byte, off, seq int64) {
	lastOff := int64(-1)
	fn := func(seq, off int64, m map[string]any) bool {
		if off != lastOff { // the first object of a line
			st.addMark(seq-1, off)
			lastOff = off
		}
		if m["status"] == string(durable.StepCompleted) {
			if key, ok := m["idempotency_key"].(string); ok {
				st.noteCompleted(strings.Clone(key), seq) // not a slice of the whole line
			}
		}
		return true
	}
	whole := data[:bytes.LastIndexByte(data, '\n')+1]
	st.tailSeq = s.walkLedger(path, whole, off, seq, fn)
	st.tailOff = off + int64(len(whole))
	st.count = s.walkLedger(path, data[len(whole):], st.tailOff, st.tailSeq, fn)
	st.size = off + int64(len(data))
}

// forgetLedger drops the cached state so the next use rescans the file.
func (s *Store) forgetLedger(runID string) {
	s.ledgers.Remove(runID)
}

// walkLedger decodes the JSONL data that starts at byte off of the file,
// preceded by seq records, calling fn with each object's seq and the
// offset of its line until fn returns false. Blank lines are skipped;
// a line holding several concatenated objects yields each of them; a line
// that is not JSON (a torn final write, garbage) is logged and skipped.
// It returns the seq of the last object seen.
func (s *Store) walkLedger(path string, data []byte, off, seq int64, fn func(seq, off int64, m map[string]any) bool) int64 {
	for len(data) > 0 {
		line, next, final := data, len(data), true
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, next, final = data[:i], i+1, false
		}
		for _, m := range s.decodeLine(path, line, off, final) {
			seq++
			if !fn(seq, off, m) {
				return seq
			}
		}
		data = data[next:]
		off += int64(next)
	}
	return seq
}

// decodeLine decodes the objects of one JSONL line.
func (s *Store) decodeLine(path string, line []byte, off int64, final bool) []map[string]any {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if m, err := pyjson.DecodeObject(line); err == nil {
		return []map[string]any{m}
	}
	vals, err := pyjson.DecodeStream(line)
	if err != nil {
		vals = append(vals, resyncedValues(line)...)
	}
	var out []map[string]any
	for _, v := range vals {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	switch {
	case err != nil && final:
		s.log.Warn("skipping torn final line", "file", path, "offset", off, "recovered", len(out), "err", err)
	case err != nil:
		s.log.Warn("skipping unreadable part of a line", "file", path, "offset", off, "recovered", len(out), "err", err)
	case len(out) > 1:
		s.log.Warn("recovered concatenated records", "file", path, "offset", off, "records", len(out))
	case len(out) < len(vals):
		s.log.Warn("skipping non-object JSON values", "file", path, "offset", off)
	}
	return out
}

// maxResyncTries bounds the starts resyncedValues tries in one line.
const maxResyncTries = 256

// resyncedValues returns the values of the longest tail of line, starting
// at an opening brace after its first byte, that decodes whole to the end
// of the line into records (looksLikeRecord): the records written after a
// torn one on the same line. A writer that does not start a new line after
// a torn write (Python's append) leaves "{…torn{…whole…}"; reading stopped
// at the tear, and the whole record after it was lost with the line, its
// completion too (a replay then ran its effect again), or a command's seq,
// given out again.
func resyncedValues(line []byte) []any {
	if p := resyncStart(line); p > 0 {
		vals, _ := pyjson.DecodeStream(line[p:])
		return vals
	}
	return nil
}

// resyncStart is where resyncedValues' tail starts, or -1. A tail must
// hold records, not just decode: a tear right after a nested object
// closes (`…"effect": {…}` cut there) leaves that object decoding to the
// end of the line, and it is no record.
func resyncStart(line []byte) int {
	tries := 0
	for p := 1; p < len(line) && tries < maxResyncTries; p++ {
		i := bytes.IndexByte(line[p:], '{')
		if i < 0 {
			return -1
		}
		p += i
		tries++
		vals, err := pyjson.DecodeStream(line[p:])
		if err == nil && len(vals) > 0 && allRecords(vals) {
			return p
		}
	}
	return -1
}

// allRecords reports whether every value looks like a record.
func allRecords(vals []any) bool {
	for _, v := range vals {
		if m, ok := v.(map[string]any); !ok || !looksLikeRecord(m) {
			return false
		}
	}
	return true
}

// looksLikeRecord reports whether m has the members every ledger record
// (run_id, step_id) or command (run_id, command_id) is written with, as
// Python's to_dict writes them.
func looksLikeRecord(m map[string]any) bool {
	_, run := m["run_id"]
	_, step := m["step_id"]
	_, command := m["command_id"]
	return run && (step || command)
}

// appendRecordsLocked appends records to a run's ledger in one write and
// sets their Seq; beforeWrite is appendFile's, given the file's size. The
// records start a line of their own whatever the file ends with, and the
// ledger's state is checked against the file appended to (one fstat), so
// that another process's append, torn line or delete since the last scan
// leaves the records and their seqs as a reading of the file gives them.
// The caller holds the run's stripe exclusively.
func (s *Store) appendRecordsLocked(runID string, records []*durable.StepRecord, beforeWrite func(size int64, data []byte) error) error {
	pooled := pyjson.GetBuffer()
	buf := *pooled
	defer func() { *pooled = buf; pyjson.PutBuffer(pooled) }() // handed back grown
	starts := make([]int, len(records))
	for i, r := range records {
		starts[i] = len(buf)
		var err error
		if buf, err = durable.AppendRecord(buf, r, pyjson.Line); err != nil {
			return fmt.Errorf("encoding ledger record %d: %w", i, err)
		}
		buf = append(buf, '\n')
	}
	path := s.ledgerPath(runID)
	var st *ledgerState
	var base int64 // the file's size before the records
	var written int
	var head []byte // the first bytes written, when the file was empty
	sync := func(f *os.File, fi fs.FileInfo, data []byte) error {
		if fi == nil {
			return errors.New("the ledger's size is unknown (fstat failed)")
		}
		var err error
		if st, err = s.ledgerOf(runID, path, f, fi); err != nil {
			return err
		}
		base, written = fi.Size(), len(data)
		if base == 0 {
			head = data[:min(len(data), headBytes)]
		}
		if beforeWrite != nil {
			return beforeWrite(base, data)
		}
		return nil
	}
	alone, err := s.appendFile(path, buf, false, true, sync)
	if err != nil {
		s.forgetLedger(runID)
		return err
	}
	if !alone {
		// Another process appended around ours: the records' seqs are
		// where a reading of the file finds them.
		s.forgetLedger(runID)
		return s.seqsFromFile(path, base, buf, records)
	}
	prefix := int64(written - len(buf)) // ownLine's '\n'
	for i, r := range records {
		seq := st.count + int64(i) + 1
		st.addMark(seq-1, base+prefix+int64(starts[i]))
		if r.Status == durable.StepCompleted {
			st.noteCompleted(r.IdempotencyKey, seq)
		}
		r.Seq = seq
	}
	if head != nil {
		st.head = bytes.Clone(head) // data views buf, a pooled buffer
	}
	st.count += int64(len(records))
	st.size = base + int64(written)
	st.tailOff, st.tailSeq = st.size, st.count
	// Again: its cost grew, and it may have been evicted meanwhile (it is
	// still exact: appends to a run hold its stripe).
	s.ledgers.Put(runID, st, st.cost())
	return nil
}

// seqsFromFile sets the Seq of records, whose encoding buf was appended
// to the ledger at path at or after offset base while another process
// appended too, from where a reading of the file finds buf: one more than
// the objects before it.
func (s *Store) seqsFromFile(path string, base int64, buf []byte, records []*durable.StepRecord) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s after an append: %w", path, err)
	}
	at := -1
	if base <= int64(len(data)) {
		if i := bytes.Index(data[base:], buf); i >= 0 {
			at = int(base) + i
		}
	}
	if at < 0 {
		return fmt.Errorf("%s: the records appended are not found in it after another process's append", path)
	}
	before := s.walkLedger(path, data[:at], 0, 0, func(int64, int64, map[string]any) bool { return true })
	for i, r := range records {
		r.Seq = before + int64(i) + 1
	}
	return nil
}

// LedgerAppend implements store.LedgerStore.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if err := checkRunID(runID); err != nil {
		return fmt.Errorf("jsonfile: ledger append: %w", err)
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	lk := s.stripe(runID)
	lk.Lock()
	defer lk.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return err
	}
	if err := s.appendRecordsLocked(runID, records, nil); err != nil {
		return fmt.Errorf("jsonfile: ledger append %s: %w", runID, err)
	}
	return nil
}

// readLedger reads the part of a run's ledger file after the record
// seq 'after' and calls fn for every record from there, in order, up to
// the end the file had when opened. The caller holds the run's stripe
// exclusively.
func (s *Store) readLedger(runID string, after int64, fn func(seq int64, m map[string]any) bool) error {
	path := s.ledgerPath(runID)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		_, err := s.ledgerOf(runID, path, nil, nil)
		return err
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	// The state is checked against the file read (one fstat), which
	// another process may have appended to or replaced since.
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	st, err := s.ledgerOf(runID, path, f, fi)
	if err != nil {
		return err
	}
	if after >= st.count {
		return nil
	}
	start := st.startFor(max(after, 0))
	// The file is read a chunk at a time, so that a page (a Limit, or a
	// look-up found early) reads about what it returns.
	off, seq, end := start.off, start.seq, st.size
	var buf []byte // file bytes from off not walked yet
	stopped := false
	walk := func(seq, _ int64, m map[string]any) bool {
		if seq <= after {
			return true
		}
		stopped = !fn(seq, m)
		return !stopped
	}
	for off+int64(len(buf)) < end && !stopped {
		n := min(int64(ledgerChunk), end-off-int64(len(buf)))
		read := len(buf)
		buf = slices.Grow(buf, int(n))[:read+int(n)]
		if _, err := f.ReadAt(buf[read:], off+int64(read)); err != nil {
			s.forgetLedger(runID)
			return fmt.Errorf("reading %s: %w", path, err)
		}
		whole := buf // the complete lines read so far (all of it at the end)
		if off+int64(len(buf)) < end {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				continue // a line longer than a chunk: read on
			}
			whole = buf[:i+1]
		}
		seq = s.walkLedger(path, whole, off, seq, walk)
		off += int64(len(whole))
		buf = append(buf[:0], buf[len(whole):]...)
	}
	return nil
}

// ledgerChunk is how much of a ledger file readLedger reads at a time.
const ledgerChunk = 64 << 10

// LedgerList implements store.LedgerStore. Seq is the position of the
// record among the JSON objects of the file.
func (s *Store) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if checkRunID(p.RunID) != nil || !ledgerNameFits(p.RunID) {
		return nil, nil
	}
	lk := s.stripe(p.RunID)
	lk.Lock()
	defer lk.Unlock()
	var out []*durable.StepRecord
	err := s.readLedger(p.RunID, p.After, func(seq int64, m map[string]any) bool {
		r, err := durable.RecordFromJSON(m)
		if err != nil {
			s.log.Warn("skipping undecodable ledger record", "run_id", p.RunID, "seq", seq, "err", err)
			return true
		}
		r.Seq = seq
		out = append(out, r)
		return p.Limit <= 0 || len(out) < p.Limit
	})
	if err != nil {
		return nil, fmt.Errorf("jsonfile: ledger list %s: %w", p.RunID, err)
	}
	return out, nil
}

// LedgerCount implements store.LedgerStore: the number of JSON objects in
// the file (Python counts non-blank lines; the two differ only on lines
// holding concatenated or torn records).
func (s *Store) LedgerCount(ctx context.Context, runID string) (int64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if checkRunID(runID) != nil || !ledgerNameFits(runID) {
		return 0, nil
	}
	lk := s.stripe(runID)
	lk.Lock()
	defer lk.Unlock()
	st, err := s.ledgerLocked(runID)
	if err != nil {
		return 0, fmt.Errorf("jsonfile: ledger count %s: %w", runID, err)
	}
	return st.count, nil
}

// LedgerDelete implements store.LedgerStore by removing the file.
func (s *Store) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if checkRunID(runID) != nil || !ledgerNameFits(runID) {
		return 0, nil
	}
	lk := s.stripe(runID)
	lk.Lock()
	defer lk.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return 0, err
	}
	st, err := s.ledgerLocked(runID)
	if err != nil {
		return 0, fmt.Errorf("jsonfile: ledger delete %s: %w", runID, err)
	}
	err = os.Remove(s.ledgerPath(runID))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("jsonfile: ledger delete %s: %w", runID, err)
	}
	s.forgetLedger(runID)
	if err == nil {
		// As RunDelete: a power loss must not bring the ledger back.
		if err := s.syncDir(); err != nil {
			return st.count, fmt.Errorf("jsonfile: ledger delete %s: %w", runID, err)
		}
	}
	return st.count, nil
}

// LedgerFindCompleted implements store.LedgerFinder from the in-memory key
// index of the ledger; only a hit reads the file, from near the record.
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if checkRunID(runID) != nil || !ledgerNameFits(runID) || key == "" {
		return nil, nil
	}
	lk := s.stripe(runID)
	lk.Lock()
	defer lk.Unlock()
	st, err := s.ledgerLocked(runID)
	if err != nil {
		return nil, fmt.Errorf("jsonfile: ledger find %s: %w", runID, err)
	}
	want, ok := st.completed[key]
	if !ok {
		return nil, nil
	}
	var found *durable.StepRecord
	err = s.readLedger(runID, want-1, func(seq int64, m map[string]any) bool {
		if m["status"] != string(durable.StepCompleted) || m["idempotency_key"] != key {
			return true
		}
		r, err := durable.RecordFromJSON(m)
		if err != nil {
			// LedgerList skips it too: the next record with the key, if
			// any, is the one found.
			s.log.Warn("skipping an unreadable ledger record", "run_id", runID, "seq", seq, "err", err)
			return true
		}
		r.Seq = seq
		found = r
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("jsonfile: ledger find %s: %w", runID, err)
	}
	return found, nil
}
