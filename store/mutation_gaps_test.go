package store_test

// Tests added by mutation testing of the shared store helpers: each guards
// a promise of a doc comment (or of Python's behaviour) that no other test
// checked.

import (
	"context"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// scanOnlyLedger is a LedgerStore without the LedgerFinder fast path, so
// FindCompleted reads its ledger.
type scanOnlyLedger struct {
	store.LedgerStore
	recs []*durable.StepRecord
}

func (l scanOnlyLedger) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	return l.recs, nil
}

// TestFindCompletedEmptyKeyFindsNothingWhenScanning guards "An empty key
// names no effect: nil, whatever the store": a completed record without an
// idempotency key is not found by the empty key on a store without the
// fast path.
func TestFindCompletedEmptyKeyFindsNothingWhenScanning(t *testing.T) {
	t.Parallel()
	l := scanOnlyLedger{recs: []*durable.StepRecord{
		{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Seq: 1},
	}}
	got, err := store.FindCompleted(t.Context(), l, "r1", "")
	if err != nil || got != nil {
		t.Errorf("FindCompleted with an empty key = %+v, %v; want nil, nil", got, err)
	}
}

// TestFindCompletedScanSkipsRecordsNotCompleted: the scanning path returns
// the first COMPLETED record with the key, not a started or failed one
// that carries the same key.
func TestFindCompletedScanSkipsRecordsNotCompleted(t *testing.T) {
	t.Parallel()
	l := scanOnlyLedger{recs: []*durable.StepRecord{
		{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepStarted, IdempotencyKey: "k", Seq: 1},
		{RunID: "r1", StepID: "s2", NodeID: "n", Status: durable.StepFailed, IdempotencyKey: "k", Seq: 2},
		{RunID: "r1", StepID: "s3", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k", Seq: 3},
	}}
	got, err := store.FindCompleted(t.Context(), l, "r1", "k")
	if err != nil || got == nil || got.Seq != 3 {
		t.Errorf("FindCompleted = %+v, %v; want the completed record (seq 3)", got, err)
	}
}

// TestIsAtomicOfWrapperFollowsTheWrappedStore: a Wrapper always has an
// AtomicCommit method, so IsAtomic must use its answer: a wrapped
// non-atomic store stays non-atomic (else the kernel would skip its replay
// checks on a store that can half-commit).
func TestIsAtomicOfWrapperFollowsTheWrappedStore(t *testing.T) {
	t.Parallel()
	nonAtomic := struct{ store.Store }{memory.New()} // hides AtomicCommit
	if store.IsAtomic(nonAtomic) {
		t.Fatal("precondition: the bare store is atomic")
	}
	if store.IsAtomic(store.Wrapper{Store: nonAtomic}) {
		t.Error("IsAtomic(Wrapper of a non-atomic store) = true, want false")
	}
	if !store.IsAtomic(store.Wrapper{Store: memory.New()}) {
		t.Error("IsAtomic(Wrapper of the memory store) = false, want true")
	}
}

// TestNewCommandIDIsUUID4Hex guards "a random uuid4 in hex without
// dashes": 32 hex digits with the version (4) and variant (10xx) bits.
func TestNewCommandIDIsUUID4Hex(t *testing.T) {
	t.Parallel()
	for range 64 {
		id := store.NewCommandID()
		b, err := hex.DecodeString(id)
		if err != nil || len(b) != 16 {
			t.Fatalf("NewCommandID() = %q: not 32 hex digits", id)
		}
		if b[6]>>4 != 4 || b[8]&0xc0 != 0x80 {
			t.Fatalf("NewCommandID() = %q: not a uuid4 (version nibble %x, variant bits %02b)", id, b[6]>>4, b[8]>>6)
		}
	}
}

// TestPrepareCommandKeepsTSInUTCToTheMicrosecond: a caller's TS is kept
// as every store keeps it, in UTC truncated to the microsecond.
func TestPrepareCommandKeepsTSInUTCToTheMicrosecond(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 2*3600))
	c := &durable.CommandRecord{RunID: "r1", Type: "pause", TS: durable.Time{Time: ts}}
	if _, err := store.PrepareCommand(c, time.Now()); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 5, 6, 5, 8, 9, 123456000, time.UTC)
	if !c.TS.Time.Equal(want) || c.TS.Time.Location() != time.UTC || c.TS.Nanosecond() != 123456000 {
		t.Errorf("TS = %v, want %v (UTC, microseconds)", c.TS.Time, want)
	}
}

func lifecycle(ret map[string]any) map[string]any {
	return store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{"retention": ret}})
}

// TestRunLifecycleKeepsOnlyPositiveTTL guards "a retention object with a
// positive integer ttl_s" (Python: `if number > 0`): 0 and negatives are
// dropped, and with them an otherwise empty retention.
func TestRunLifecycleKeepsOnlyPositiveTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []any{0, "0", -5} {
		if got := lifecycle(map[string]any{"ttl_s": ttl}); got != nil {
			t.Errorf("ttl_s %#v: lifecycle = %v, want nil", ttl, got)
		}
	}
}

// TestRunLifecycleTTLFromPaddedNumericString: Python's int(" 3600 ")
// reads 3600 (int() strips whitespace), so list_run_index keeps ttl_s.
func TestRunLifecycleTTLFromPaddedNumericString(t *testing.T) {
	t.Parallel()
	got := lifecycle(map[string]any{"ttl_s": " 3600\n"})
	want := map[string]any{"retention": map[string]any{"ttl_s": int64(3600)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lifecycle = %#v, want %#v", got, want)
	}
}

// TestRunLifecycleTrimsTo240Characters guards "known string keys trimmed
// to 240 characters" (Python: cleaned[:240], code points, not bytes).
func TestRunLifecycleTrimsTo240Characters(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 241)
	got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{"source": long}})
	if s, _ := got["source"].(string); s != strings.Repeat("é", 240) {
		t.Errorf("source trimmed to %d characters, want 240", len([]rune(s)))
	}
}

// TestRunLifecycleReadsCommittedGoTypes: a lifecycle committed in Go types
// a read never gives (map[string]string, an int32 ttl) is sanitised as its
// read-back form would be, so stores that index what the caller committed
// list what stores indexing what they read back list.
func TestRunLifecycleReadsCommittedGoTypes(t *testing.T) {
	t.Parallel()
	got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]string{"source": "gateway"}})
	if want := map[string]any{"source": "gateway"}; !reflect.DeepEqual(got, want) {
		t.Errorf("map[string]string lifecycle = %#v, want %#v", got, want)
	}
	got = lifecycle(map[string]any{"ttl_s": int32(60)})
	if want := map[string]any{"retention": map[string]any{"ttl_s": int64(60)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("int32 ttl_s lifecycle = %#v, want %#v", got, want)
	}
}

// TestDueIndexMovedDeadlineKeepsEarliestFirst: Set on a run already in
// the index moves its deadline, and Next/ListDue see the new order (the
// heap is fixed, not left with a stale root).
func TestDueIndexMovedDeadlineKeepsEarliestFirst(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) durable.Time { return durable.NewTime(base.Add(time.Duration(s) * time.Second)) }
	var d store.DueIndex
	d.Set("a", at(1))
	d.Set("b", at(2))
	d.Set("c", at(3))
	d.Set("a", at(10)) // later than the others
	if got := d.Next(); !got.Equal(at(2).Time) {
		t.Errorf("Next = %v, want b's %v", got.Time, at(2).Time)
	}
	due := d.ListDue(base.Add(5*time.Second), 10)
	if len(due) != 2 || due[0].RunID != "b" || due[1].RunID != "c" {
		t.Errorf("ListDue at +5s = %+v, want b then c", due)
	}
	d.Set("c", at(0)) // earlier than the others
	if got := d.Next(); !got.Equal(at(0).Time) {
		t.Errorf("Next after moving c earlier = %v, want %v", got.Time, at(0).Time)
	}
}
