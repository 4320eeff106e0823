package jsonfile

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// commandsFile is the command inbox of the Python gateway.
const commandsFile = "commands.jsonl"

// seqFile keeps the highest seq issued when a delete removes the newest
// commands, so that a reopened store does not issue their seqs again (the
// counter is otherwise rebuilt from commands.jsonl). Python's stores do
// not read it; they reuse such seqs.
const seqFile = "commands_seq.json"

// commandLog is the in-memory image of commands.jsonl: the records in seq
// order, the id→seq index and the seq counter.
type commandLog struct {
	mu      sync.Mutex
	records []*durable.CommandRecord
	byID    map[string]int64
	// lastSeq is the highest seq issued, found at open in the file,
	// commands_seq.json or a saved cursor, and in the file again at each
	// delete (another process's appends); a seq is never issued twice,
	// even after deletes.
	lastSeq int64
}

func (s *Store) commandsPath() string { return filepath.Join(s.dir, commandsFile) }

func (s *Store) cursorPath(consumer string) string {
	if consumer == store.DefaultConsumer {
		return filepath.Join(s.dir, "commands_cursor.json")
	}
	return filepath.Join(s.dir, "commands_cursor_"+consumer+".json")
}

// loadCommands rebuilds the command log from commands.jsonl, and the seq
// counter from it, commands_seq.json and the saved cursors: a cursor past
// the file's last seq means newer commands were deleted (by Python's
// delete_by_run, or before commands_seq.json existed), and their seqs
// must not come back below a consumer's cursor.
func (s *Store) loadCommands() error {
	c := &s.cmd
	c.byID = map[string]int64{}
	path := s.commandsPath()
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("jsonfile: reading %s: %w", path, err)
	}
	var maxSeq int64
	c.records, c.byID, maxSeq = s.indexCommands(path, data)
	c.lastSeq = max(c.lastSeq, maxSeq)
	if n, ok := s.readNumberFile(filepath.Join(s.dir, seqFile), "seq"); ok {
		c.lastSeq = max(c.lastSeq, n)
	}
	cursors, err := atomicfile.Glob(s.dir, "commands_cursor*.json")
	if err != nil {
		return fmt.Errorf("jsonfile: listing cursor files: %w", err)
	}
	for _, p := range cursors {
		if n, ok := s.readCursor(p); ok {
			c.lastSeq = max(c.lastSeq, n)
		}
	}
	return nil
}

// indexCommands reads the commands of data (commands.jsonl's bytes), in
// seq order, and the highest seq any line names. The first line of a
// command id is the command, as in Python's index; lines it cannot use
// stay in the file, untouched, and are logged.
func (s *Store) indexCommands(path string, data []byte) (records []*durable.CommandRecord, byID map[string]int64, maxSeq int64) {
	byID = map[string]int64{}
	s.walkLedger(path, data, 0, 0, func(_, off int64, m map[string]any) bool {
		rec, err := durable.CommandFromJSON(m)
		if err != nil {
			if r, lerr := commandWithoutTS(m); lerr == nil {
				rec, err = r, nil
			}
		}
		switch {
		case err != nil:
			s.log.Warn("keeping an undecodable command line as it is", "file", path, "offset", off, "err", err)
		case rec.Seq <= 0:
			s.log.Warn("keeping a command without a seq as it is", "file", path, "command_id", rec.CommandID)
		case byID[rec.CommandID] != 0:
			s.log.Warn("keeping a duplicate command as it is", "file", path, "command_id", rec.CommandID, "seq", rec.Seq)
		default:
			records = append(records, rec)
			byID[rec.CommandID] = rec.Seq
		}
		if n, ok := seqOf(m); ok {
			maxSeq = max(maxSeq, n)
		}
		return true
	})
	slices.SortStableFunc(records, func(a, b *durable.CommandRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	return records, byID, maxSeq
}

// commandWithoutTS decodes a command whose ts is neither text nor null
// (a number a hand edit left), leaving its TS zero.
func commandWithoutTS(m map[string]any) (*durable.CommandRecord, error) {
	if _, ok := m["ts"]; !ok {
		return nil, errors.New("no ts to leave out")
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		if k != "ts" {
			c[k] = v
		}
	}
	return durable.CommandFromJSON(c)
}

// seqOf returns the seq of a command line's object, if it has one, read
// as Python's int() reads it (see intOf): 2.0 is 2.
func seqOf(m map[string]any) (int64, bool) {
	num, ok := m["seq"].(json.Number)
	if !ok {
		return 0, false
	}
	return intOf(num)
}

// intOf reads a JSON number as Python's int() reads the value json.loads
// gives: 2.0 is 2, and a number past the int64 range saturates at its
// bound, since Python's unbounded int is past every seq there (Go's
// conversion of an out-of-range float is undefined: math.MinInt64 on
// amd64, which would make a cursor past everything replay everything).
// An infinity (1e400, Infinity), which Python's int() refuses, is past
// the range too and saturates alike; NaN is no integer.
func intOf(num json.Number) (int64, bool) {
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err == nil || errors.Is(err, strconv.ErrRange) {
		return n, true // ParseInt saturates an integer out of range
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if math.IsNaN(f) || err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return pyval.SaturatedInt(f), true
}

func cloneCommand(c *durable.CommandRecord) *durable.CommandRecord {
	cp := *c
	cp.Payload = pyjson.CloneObject(c.Payload)
	if cp.Payload == nil {
		cp.Payload = map[string]any{}
	}
	return &cp
}

func commandLine(c *durable.CommandRecord) ([]byte, error) {
	b, err := pyjson.Append(nil, c.JSONValue(), pyjson.Line, "command")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CommandAppend implements store.CommandStore. run_id and type are
// required and the payload must be JSON; an empty ts is set to now.
func (s *Store) CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error) {
	payload, err := store.PrepareCommand(c, nowTime().Time)
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("jsonfile: command append: %w", err)
	}
	// The cached payload is its encoding decoded: a deep copy, in the
	// types a read of the file gives.
	stored, err := pyjson.DecodeObject(payload)
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("jsonfile: command append: %w", err)
	}
	if err := s.checkOpen(); err != nil {
		return durable.CommandAppendResult{}, err
	}
	l := &s.cmd
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return durable.CommandAppendResult{}, err
	}
	if seq, ok := l.byID[c.CommandID]; ok {
		return durable.CommandAppendResult{Duplicate: true, Seq: seq}, nil
	}
	if l.lastSeq == math.MaxInt64 {
		// lastSeq+1 would wrap to a negative seq that no consumer lists
		// and a reopen drops: refused rather than accepted and lost.
		return durable.CommandAppendResult{}, fmt.Errorf("jsonfile: command append %s: no seq left: seq %d, the largest an int64 holds, "+
			"is already taken (by %s, %s or a saved cursor)", c.CommandID, l.lastSeq, commandsFile, seqFile)
	}
	rec := new(durable.CommandRecord)
	*rec = *c
	rec.Payload = stored
	if !rec.HasTS() {
		rec.TS = nowTime()
	}
	rec.Seq = l.lastSeq + 1
	line, err := commandLine(rec)
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("jsonfile: command append: %w", err)
	}
	_, statErr := os.Stat(s.commandsPath())
	// ownLine: the file's tail is read at each append, not remembered,
	// since a Python process (no runner) may append to commands.jsonl
	// while the store is open, and be killed mid-line; and a failed append
	// of ours may have left part of its line.
	_, err = s.appendFile(s.commandsPath(), line, errors.Is(statErr, fs.ErrNotExist), true, nil)
	l.lastSeq = rec.Seq // handed out, whatever happened
	if err != nil && !errors.Is(err, errAppendedUnsynced) {
		return durable.CommandAppendResult{}, fmt.Errorf("jsonfile: command append: %w", err)
	}
	// The line is whole in the file: it is the command, even when only
	// its new directory entry may not be durable (errAppendedUnsynced),
	// which a retry with the same id must then find, as a reopen would.
	l.records = append(l.records, rec)
	l.byID[rec.CommandID] = rec.Seq
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("jsonfile: command append: %w", err)
	}
	c.Seq = rec.Seq
	return durable.CommandAppendResult{Accepted: true, Seq: rec.Seq}, nil
}

// appendFile appends data to path in one write, synced unless NoSync;
// when the file is new (created), its directory entry is synced too. A
// failed append is cut back off the file where it can be; callers must
// still treat the file's tail as unknown (part of data may be in it).
// With ownLine, data starts a line of its own: a '\n' is written before
// it, in the same write, unless the file is empty or its last byte (read
// through the descriptor appended with) is one. A file found empty is
// taken as created. beforeWrite, when not nil, is called just before the
// write with the open file (readable with ownLine), its info (nil when
// fstat failed) and the bytes about to be appended; an error from it
// ends the append with nothing written. alone reports that the file grew
// by exactly the bytes written, so that data starts where beforeWrite's
// info said the file ended: no other process appended around it.
func (s *Store) appendFile(path string, data []byte, created, ownLine bool, beforeWrite func(f *os.File, fi fs.FileInfo, data []byte) error) (alone bool, err error) {
	flag := os.O_WRONLY
	if ownLine {
		flag = os.O_RDWR // to read the last byte
	}
	f, err := atomicfile.OpenFile(path, flag|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return false, fmt.Errorf("opening %s: %w", path, err)
	}
	size := int64(-1)
	fi, err := f.Stat()
	if err == nil {
		size = fi.Size()
	} else {
		fi = nil
	}
	// Its directory entry may be new (ours, or another process's that
	// never synced it): synced as ours.
	created = created || size == 0
	if ownLine && size != 0 && !endsWithNewline(f, size) {
		data = append([]byte{'\n'}, data...)
	}
	if beforeWrite != nil {
		if err := beforeWrite(f, fi, data); err != nil {
			_ = f.Close()
			return false, err
		}
	}
	write := (*os.File).Write
	if s.writeForTest != nil {
		write = s.writeForTest
	}
	n, err := write(f, data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err == nil && !s.noSync {
		err = f.Sync()
	}
	// Another process (Python, no runner) may have appended between the
	// fstat above and the write, or since.
	if end, serr := f.Stat(); serr == nil && size >= 0 {
		alone = end.Size() == size+int64(n)
	}
	if err != nil && alone {
		// Not accepted, so not left for a reopen to read back. Cut only
		// when what follows size is ours alone: a cut to size would also
		// take another process's appended record. Otherwise the part
		// written stays, a torn line readers pass over.
		_ = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if created {
			s.dirUnsynced.Store(true)
		}
		return alone, fmt.Errorf("appending to %s: %w", path, err)
	}
	if created || s.dirUnsynced.Load() {
		if err := s.syncDir(); err != nil {
			return alone, fmt.Errorf("%w: %w", errAppendedUnsynced, err)
		}
	}
	return alone, nil
}

// endsWithNewline reports whether the file of size bytes ends with '\n'.
// An unknown size (-1) or a failed read is false: an extra '\n' only
// makes an empty line, which readers skip, where a missing one would glue
// a line onto a torn tail.
func endsWithNewline(f *os.File, size int64) bool {
	if size <= 0 {
		return false
	}
	var b [1]byte
	n, err := f.ReadAt(b[:], size-1)
	return n == 1 && err == nil && b[0] == '\n'
}

// errAppendedUnsynced reports an append whose data is in the file (and
// synced), but whose directory sync failed afterwards.
var errAppendedUnsynced = errors.New("appended, but the directory sync failed")

// CommandListAfter implements store.CommandStore; limit <= 0 means 1000.
func (s *Store) CommandListAfter(ctx context.Context, after int64, limit int) ([]*durable.CommandRecord, int64, error) {
	if err := s.checkOpen(); err != nil {
		return nil, after, err
	}
	if limit <= 0 {
		limit = 1000
	}
	l := &s.cmd
	l.mu.Lock()
	defer l.mu.Unlock()
	// The first seq > after (not >= after+1, which wraps at MaxInt64).
	i := sort.Search(len(l.records), func(i int) bool { return l.records[i].Seq > after })
	var out []*durable.CommandRecord
	next := after
	for _, c := range l.records[i:] {
		if len(out) == limit {
			break
		}
		out = append(out, cloneCommand(c))
		next = c.Seq
	}
	return out, next, nil
}

// CommandLastSeq implements store.CommandStore: the highest stored seq.
func (s *Store) CommandLastSeq(ctx context.Context) (int64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	l := &s.cmd
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.records); n > 0 {
		return l.records[n-1].Seq, nil
	}
	return 0, nil
}

// CommandDeleteByRun implements store.CommandStore by rewriting
// commands.jsonl atomically without the run's commands. Every other line
// is copied byte for byte, as Python's delete_by_run copies it: a ts in a
// client's spelling, members a newer writer added and lines no one can
// read stay as they were.
func (s *Store) CommandDeleteByRun(ctx context.Context, runID string) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	runID = pyval.Strip(runID) // as Python's delete_by_run
	l := &s.cmd
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return 0, err
	}
	path := s.commandsPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("jsonfile: command delete: %w", err)
	}
	kept := make([]byte, 0, len(data))
	n := 0
	var keptMax int64 // the highest seq left in the file
	var fileMax int64 // the highest seq in the file read, deleted ones included
	for rest := data; len(rest) > 0; {
		line, tail, _ := bytes.Cut(rest, []byte{'\n'})
		rest = tail
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		objs := [][]byte{line}
		if _, err := pyjson.DecodeObject(line); err != nil {
			// Several commands joined on one line (racing writers), which
			// the store reads as separate commands: each is kept or
			// dropped on its own, kept ones on lines of their own.
			if parts, ok := splitJoined(line); ok {
				objs = parts
			}
		}
		var keep [][]byte
		for _, obj := range objs {
			m, err := pyjson.DecodeObject(obj)
			seq, hasSeq := seqOf(m)
			if hasSeq {
				fileMax = max(fileMax, seq)
			}
			if rid, isStr := m["run_id"].(string); err == nil && isStr && pyval.Strip(rid) == runID { // Python strips it too
				n++
				continue
			}
			if hasSeq {
				keptMax = max(keptMax, seq)
			}
			keep = append(keep, obj)
		}
		if len(keep) == len(objs) {
			keep = [][]byte{line} // nothing dropped: the line as it was
		}
		for _, obj := range keep {
			kept = append(append(kept, obj...), '\n')
		}
	}
	// Another process (Python, no runner) may have appended commands
	// since the store read the file: their seqs are taken too, whether
	// they stay (memory is rebuilt from the file below) or go.
	l.lastSeq = max(l.lastSeq, fileMax)
	if n == 0 {
		return 0, nil
	}
	if keptMax < l.lastSeq {
		// The newest commands go: keep their seqs out of reuse, first,
		// so that a crash between the two writes loses nothing.
		hw, err := pyjson.Marshal(pyjson.Ordered{{Key: "seq", Value: l.lastSeq}}, pyjson.Pretty)
		if err == nil {
			err = s.replaceFile(filepath.Join(s.dir, seqFile), hw)
		}
		if err != nil {
			return 0, fmt.Errorf("jsonfile: command delete: saving the last seq: %w", err)
		}
	}
	// A fresh file, not a recycled spare (replaceFile): another process
	// (Python, no runner) may hold commands.jsonl open to append, and its
	// write must land in the displaced file, unlinked, as under Python's
	// own delete_by_run, not in whatever file a recycled spare becomes.
	if err := s.writeFile(path, kept); err != nil {
		return 0, fmt.Errorf("jsonfile: command delete: %w", err)
	}
	// Memory is what the file now holds, so a reopen lists the same: a
	// command id whose first line went (two writers' duplicates) is the
	// line kept, as after Python's rebuild of its index.
	var maxSeq int64
	l.records, l.byID, maxSeq = s.indexCommands(path, kept)
	l.lastSeq = max(l.lastSeq, maxSeq) // as at open, should the two readings differ
	return n, nil
}

// readCursor reads a cursor file; a missing or unreadable file is (0,
// false).
func (s *Store) readCursor(path string) (int64, bool) { return s.readNumberFile(path, "cursor") }

// readNumberFile reads the value under key in a small JSON file (a
// cursor, commands_seq.json) as Python's load reads a cursor,
// int(data.get("cursor") or 0): a number as intOf reads it, a string in
// int()'s spelling (" 12 ", "+1_2") as its integer, true as 1, and
// integers past the int64 range saturated at its bounds. A missing or
// unreadable file, or one without such a value, is (0, false), logged
// unless missing; a null, false or empty value is (0, true).
func (s *Store) readNumberFile(path, key string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("unreadable file", "file", path, "err", err)
		}
		return 0, false
	}
	m, err := pyjson.DecodeObject(data)
	if err != nil {
		s.log.Warn("unreadable file", "file", path, "err", err)
		return 0, false
	}
	val, found := m[key]
	if !found {
		s.log.Warn("file without its number", "file", path, "key", key)
		return 0, false
	}
	var n int64
	ok := true
	switch v := val.(type) {
	case nil:
	case bool:
		if v {
			n = 1
		}
	case json.Number:
		n, ok = intOf(v)
	case string:
		if v != "" {
			var err error
			n, err = pyval.ToIndex(v) // int()'s syntax, saturated past the range
			ok = err == nil
		}
	default:
		ok = false
	}
	if !ok {
		s.log.Warn("file whose number is not an integer", "file", path, "key", key, "value", val)
	}
	return n, ok
}

// CursorLoad implements store.CommandStore: 0 when the consumer's cursor
// file is missing or unreadable.
func (s *Store) CursorLoad(ctx context.Context, consumer string) (int64, error) {
	if err := checkID("consumer", consumer); err != nil {
		return 0, err
	}
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	// Under the lock CursorSave writes under: a cursor file replaced while
	// it is read is recycled for the next file written (atomicfile).
	s.cmd.mu.Lock()
	defer s.cmd.mu.Unlock()
	n, _ := s.readCursor(s.cursorPath(consumer))
	return n, nil
}

// CursorSave implements store.CommandStore, writing {"cursor", "updated_at"}
// (indent 2) through a temp file and a rename.
func (s *Store) CursorSave(ctx context.Context, consumer string, cursor int64) error {
	if err := checkID("consumer", consumer); err != nil {
		return err
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	data, err := pyjson.Marshal(pyjson.Ordered{
		{Key: "cursor", Value: cursor},
		{Key: "updated_at", Value: nowTime().String()},
	}, pyjson.Pretty)
	if err != nil {
		return fmt.Errorf("jsonfile: encoding cursor: %w", err)
	}
	l := &s.cmd
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return err
	}
	if err := s.replaceFile(s.cursorPath(consumer), data); err != nil {
		return fmt.Errorf("jsonfile: saving cursor %s: %w", consumer, err)
	}
	return nil
}

// splitJoined splits a line holding several JSON values one after another
// into their exact bytes; a torn or garbled rest after whole values is a
// last part of its own. ok is false when the line does not start with a
// whole value, and it is then kept as it is.
func splitJoined(line []byte) (parts [][]byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var end int64 // of the last whole value
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return parts, len(parts) > 0
		}
		if err != nil {
			if len(parts) == 0 {
				// Torn bytes first (a writer killed mid-line, then
				// Python's append on the same line): they make a part of
				// their own, no reader decodes it, and the records after
				// them are split as any others.
				p := resyncStart(line)
				if p <= 0 {
					return nil, false
				}
				rest, ok := splitJoined(line[p:])
				if !ok {
					return nil, false
				}
				return append([][]byte{bytes.TrimRight(line[:p], " \t\r")}, rest...), true
			}
			// A torn value after whole ones (a writer killed mid-line,
			// then another append): the rest stays as it is, a part of
			// its own that no reader decodes.
			return append(parts, bytes.TrimLeft(line[end:], " \t\r")), true
		}
		parts = append(parts, raw)
		end = dec.InputOffset()
	}
}
