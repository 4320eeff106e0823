package durable_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// pythonForeignTimeChain is a hash chain Python's verify_ledger_chain
// accepts whose records spell started_at and ended_at in other ways than
// isoformat(): RFC 3339 "Z", three-digit fractions, naive times, text no
// parser reads ("yesterday"), "" and a +01:00 offset. Python's StepRecord
// keeps both as plain strings and compute_record_hash (storage/
// ledger_chain.py) hashes them as given. The lines are
// json.dumps(record, ensure_ascii=False) and the hashes compute_record_hash
// of them, computed with Python 3.
var pythonForeignTimeChain = []string{
	`{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01.500Z", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "4706139809a32a856788211352f410996cf90cfbacd1eae0d43b2b665ad7531b", "signature": null}`,
	`{"run_id": "r1", "step_id": "s2", "node_id": "n", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:02.250+00:00", "ended_at": "2026-01-01T00:00:03.000+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "4706139809a32a856788211352f410996cf90cfbacd1eae0d43b2b665ad7531b", "record_hash": "de4203fcb562242f180fe04e2834c44e24d5bb98bbba7a833619e9182b23b606", "signature": null}`,
	`{"run_id": "r1", "step_id": "s3", "node_id": "n", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:04", "ended_at": "2026-01-01T00:00:05.123456", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "de4203fcb562242f180fe04e2834c44e24d5bb98bbba7a833619e9182b23b606", "record_hash": "6f76491c1624b4287f83f6c3dc61adbeaddd9560b954d5f9f69798466f476b6c", "signature": null}`,
	`{"run_id": "r1", "step_id": "s4", "node_id": "n", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "yesterday", "ended_at": "", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "6f76491c1624b4287f83f6c3dc61adbeaddd9560b954d5f9f69798466f476b6c", "record_hash": "acf0552e12b0d6a248efab8147c283901f71361d6a2ea8d1c13a00a1a3161d3e", "signature": null}`,
	`{"run_id": "r1", "step_id": "s5", "node_id": "n", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:06+00:00", "ended_at": "2026-01-01T01:00:07.5+01:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "acf0552e12b0d6a248efab8147c283901f71361d6a2ea8d1c13a00a1a3161d3e", "record_hash": "6961f96eba6ca073c72cb00e1a7da109d98569f28f77c01dab3820b53291a4c2", "signature": null}`,
}

// A chain Python verifies verifies here too: each record hashes with its
// timestamps as read, not as the isoformat of the times read from them.
// Promise: the store/hashchain package doc (chains written by either
// implementation verify in the other); spec runtime-model.md §1
// (StepRecord: started_at and ended_at are strings).
func TestPythonChainWithForeignTimestampsVerifies(t *testing.T) {
	t.Parallel()
	checkChainVerifiesBothWays(t, pythonForeignTimeChain)
}

// Go callers get the instant of a timestamp ParseTime reads and the zero
// Time for one it cannot read ("yesterday") or "", and the record still
// reads.
func TestRecordForeignTimestampsReadAsTimes(t *testing.T) {
	t.Parallel()
	at := func(sec, ms int) durable.Time {
		return durable.NewTime(time.Date(2026, 1, 1, 0, 0, sec, ms*int(time.Millisecond), time.UTC))
	}
	want := [][2]durable.Time{
		{at(0, 0), at(1, 500)}, // Z
		{at(2, 250), at(3, 0)}, // three-digit fractions
		{at(4, 0), at(5, 123)}, // naive, read as UTC
		{{}, {}},               // unparseable, ""
		{at(6, 0), at(7, 500)}, // isoformat, +01:00
	}
	want[2][1] = durable.NewTime(want[2][1].Add(456 * time.Microsecond))
	for i, l := range pythonForeignTimeChain {
		for how, r := range decodeBothWays(t, l) {
			if !r.StartedAt.Equal(want[i][0].Time) || !r.EndedAt.Equal(want[i][1].Time) {
				t.Errorf("%s of record %d: StartedAt, EndedAt = %v, %v; want %v, %v",
					how, i, r.StartedAt, r.EndedAt, want[i][0], want[i][1])
			}
		}
	}
}

// A record read is written back byte for byte with its timestamps as
// read, in every encoding, and through Clone, Derived and StoredCopy
// (which equals the record read back from what it writes).
func TestRecordTimestampsWrittenBackAsRead(t *testing.T) {
	t.Parallel()
	for i, l := range pythonForeignTimeChain {
		for how, r := range decodeBothWays(t, l) {
			d := r.Derived()
			copies := map[string]*durable.StepRecord{"read": r, "Clone": r.Clone(), "Derived": &d}
			c, err := r.StoredCopy()
			if err != nil {
				t.Fatal(err)
			}
			copies["StoredCopy"] = c
			for name, rec := range copies {
				if b := mustRecordLine(t, rec); string(b) != l {
					t.Errorf("%s of record %d, %s, written as\n%s\nwant\n%s", how, i, name, b, l)
				}
			}
			back, err := durable.UnmarshalRecord([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, back) {
				t.Errorf("%s of record %d: StoredCopy\n%#v\ndiffers from the record read back\n%#v", how, i, c, back)
			}
			checkTimesInEveryStyle(t, r, l)
		}
	}
}

// checkTimesInEveryStyle checks that r's started_at and ended_at members
// are written with the text of line in the sorted and indented styles too
// (the hashed text is the canonical one).
func checkTimesInEveryStyle(t *testing.T, r *durable.StepRecord, line string) {
	t.Helper()
	m, err := pyjson.DecodeObject([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []pyjson.Style{pyjson.Canonical, pyjson.Pretty} {
		b, err := durable.MarshalRecord(r, st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pyjson.DecodeObject(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"started_at", "ended_at"} {
			if got[k] != m[k] {
				t.Errorf("style %v writes %s as %#v, want %#v", st, k, got[k], m[k])
			}
		}
	}
}

// Setting StartedAt or EndedAt to another instant replaces the text read,
// in the line, in the hashed text and in StoredCopy; an unparseable text's
// zero Time replaced by an instant too, and an instant cleared to the zero
// Time writes null.
func TestRecordTimestampSetReplacesTextRead(t *testing.T) {
	t.Parallel()
	set := durable.NewTime(time.Date(2027, 2, 3, 4, 5, 6, 7000, time.UTC))
	const setText = `"2027-02-03T04:05:06.000007+00:00"`
	for i, l := range pythonForeignTimeChain {
		for how, r := range decodeBothWays(t, l) {
			r.StartedAt = set
			wantEnded := `"ended_at": null`
			if r.EndedAt.IsZero() {
				r.EndedAt = set
				wantEnded = `"ended_at": ` + setText
			} else {
				r.EndedAt = durable.Time{}
			}
			c, err := r.StoredCopy()
			if err != nil {
				t.Fatal(err)
			}
			for name, rec := range map[string]*durable.StepRecord{"set": r, "StoredCopy": c} {
				b := string(mustRecordLine(t, rec))
				if !strings.Contains(b, `"started_at": `+setText) || !strings.Contains(b, wantEnded) {
					t.Errorf("%s of record %d, %s, with the times set written as\n%s", how, i, name, b)
				}
				back, err := durable.UnmarshalRecord([]byte(b))
				if err != nil {
					t.Fatal(err)
				}
				if name == "StoredCopy" && !reflect.DeepEqual(c, back) {
					t.Errorf("%s of record %d: StoredCopy\n%#v\ndiffers from the record read back\n%#v", how, i, c, back)
				}
			}
			canon, err := pyjson.Marshal(r.JSONValue(false), pyjson.Canonical)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(canon), `"started_at":`+setText) {
				t.Errorf("%s of record %d with StartedAt set hashes\n%s", how, i, canon)
			}
		}
	}
}

func mustRecordLine(t *testing.T, r *durable.StepRecord) []byte {
	t.Helper()
	b, err := durable.MarshalRecord(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
