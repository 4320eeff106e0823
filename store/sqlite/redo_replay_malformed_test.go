package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayOfAMalformedCommitRecordIsAnErrorNotAPanic: a redo
// record whose checksum holds but whose run values are fewer than the
// run statements take (a log written by another version of the binary,
// or damaged before its checksum was computed) must make New fail with an
// error, as the decoder does for every other malformed payload
// (redoDecoder: "the first malformed read sets err"; decodeRedoOp returns
// errors for a bad flag, deadline or trailing bytes;
// TestRedoReplayRefusesAnUpdateOfAnotherVersion), not panic at open in
// replayRecord -> applyOp -> updateArgs indexing a[11]; redoOp.checkShape
// refuses it.
func TestReplayOfAMalformedCommitRecordIsAnErrorNotAPanic(t *testing.T) {
	op := &redoOp{runID: "r1", run: []any{"wf", "running", nil}, firstSeq: 1}
	var e redoEncoder
	if err := op.encode(&e); err != nil {
		t.Fatal(err)
	}
	path := closedStoreWithRedoRecord(t, e.b)
	var s *Store
	var err error
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		s, err = New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	}()
	if panicked != nil {
		t.Fatalf("New panicked replaying a malformed redo record instead of returning an error: %v", panicked)
	}
	if err == nil {
		_ = s.Close()
		t.Fatal("New replayed a redo record with 3 run values without an error")
	}
}

// TestReplayNamesAnUnknownStatement: a redo log that records a
// statement this binary does not have (a log left by a killed process of
// another version: statements are recorded by name, stmts.go byName) makes
// the store refuse to open. The error must say which statement, so that
// an operator knows the log comes from another binary, not only
// "unknown statement".
func TestReplayNamesAnUnknownStatement(t *testing.T) {
	e := redoEncoder{b: []byte{redoStatements}}
	e.str("ledgerInsertV2")
	if err := e.values([]any{"r1", int64(1)}); err != nil {
		t.Fatal(err)
	}
	path := closedStoreWithRedoRecord(t, e.b)
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err == nil {
		_ = s.Close()
		t.Fatal("New replayed a record of an unknown statement")
	}
	if !strings.Contains(err.Error(), "ledgerInsertV2") {
		t.Fatalf("the error does not name the unknown statement: %v", err)
	}
}

// closedStoreWithRedoRecord creates a store, closes it, and leaves in its
// redo log one record of payload, as a killed process would; it returns
// the database's path.
func closedStoreWithRedoRecord(t *testing.T, payload []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := openRedoFile(path+redoSuffix, 1<<40, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.append(payload); err != nil {
		t.Fatal(err)
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRedoDecoderRefusesACountPastThePayload guards redoDecoder.count: a
// damaged list length (here 2^62 records or values) is malformed, an
// error, not an allocation of that many items (a panic or an
// out-of-memory kill at open).
func TestRedoDecoderRefusesACountPastThePayload(t *testing.T) {
	huge := func(e *redoEncoder) { e.uvarint(1 << 62) }
	for name, build := range map[string]func(e *redoEncoder){
		"records": func(e *redoEncoder) { e.b = append(e.b, redoAppend); e.str("r"); e.varint(1); huge(e) },
		"values":  func(e *redoEncoder) { e.b = append(e.b, redoCommit); e.str("r"); e.b = append(e.b, 0); huge(e) },
	} {
		t.Run(name, func(t *testing.T) {
			var e redoEncoder
			build(&e)
			e.b = append(e.b, 0, 0, 0)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("decoding a count of 2^62 panicked: %v", p)
					}
				}()
				_, err = decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]})
			}()
			if err == nil {
				t.Fatal("a record whose count exceeds its payload decoded")
			}
		})
	}
}

// TestRedoDecodeRefusesTrailingBytes guards decodeRedoOp's check that a
// record holds nothing past its op: such bytes mean the record is not
// what the writer wrote, and the replay must not apply it.
func TestRedoDecodeRefusesTrailingBytes(t *testing.T) {
	for _, op := range []*redoOp{
		{runID: "r", create: true, run: []any{"wf", int64(1)}, firstSeq: 1, recs: []encodedRecord{{json: "{}"}}, deadline: 2},
		{runID: "r", firstSeq: 3, recs: []encodedRecord{{json: "{}", completedKey: "k"}}},
	} {
		var e redoEncoder
		if err := op.encode(&e); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]}); err != nil {
			t.Fatalf("the op itself: %v", err)
		}
		long := append(append([]byte(nil), e.b[1:]...), 0)
		if _, err := decodeRedoOp(e.b[0], &redoDecoder{b: long}); err == nil {
			t.Fatalf("a record of kind %d with a trailing byte decoded", e.b[0])
		}
	}
}

// TestRedoOpenRefusesAnEmptyRecord guards openRedo's refusal of a record
// without a kind byte (and redoScan's passing on its callback's error):
// the open fails instead of stopping the replay there and dropping the
// records after it.
func TestRedoOpenRefusesAnEmptyRecord(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "empty.sqlite3")
	s, err := New(ctx, Config{Path: path, NoRedoLog: true, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := openRedoFile(path+redoSuffix, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.append(nil); err != nil {
		t.Fatal(err)
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, Config{Path: path, IdleCheckpoint: -1})
	if err == nil {
		_ = c.Close()
		t.Fatal("a redo log holding an empty record opened")
	}
	if !strings.Contains(err.Error(), "empty") {
		t.Fatalf("open: %v, want the empty record named", err)
	}
}

// TestRedoDecodeRefusesAnUnknownDeadlineChange: a commit's deadline change
// is 0 (none), 1 (upsert) or 2 (delete); applyOp would silently skip any
// other, so the decoder refuses it.
func TestRedoDecodeRefusesAnUnknownDeadlineChange(t *testing.T) {
	for _, deadline := range []byte{3, 255} {
		op := &redoOp{runID: "r", firstSeq: 1, deadline: deadline}
		var e redoEncoder
		if err := op.encode(&e); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]}); err == nil {
			t.Fatalf("a record with deadline change %d decoded", deadline)
		}
	}
}
