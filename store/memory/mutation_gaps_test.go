package memory_test

// Tests added by mutation testing of the in-memory store: each guards a
// promised behaviour no other test checked.

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestClaimExpiringExactlyNowCanBeTaken: a claim expires once its TTL has
// passed, at expires_at <= now as the SQLite and PostgreSQL stores judge
// it, so another owner takes it at exactly now + TTL.
func TestClaimExpiringExactlyNowCanBeTaken(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "a", TTL: 10 * time.Second, Now: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "b", TTL: 10 * time.Second, Now: now.Add(10*time.Second - time.Nanosecond)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim by b before a's claim expires: %v, want ErrConflict", err)
	}
	if err := s.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "b", TTL: 10 * time.Second, Now: now.Add(10 * time.Second)}); err != nil {
		t.Errorf("claim by b when a's claim expires: %v, want it taken", err)
	}
}

// TestCommandAppendSetsSeqOnTheCommand: the seq is store-assigned onto the
// caller's record, as every durable backend does, and equals the result's.
func TestCommandAppendSetsSeqOnTheCommand(t *testing.T) {
	t.Parallel()
	s := memory.New()
	for i := range 2 {
		c := &durable.CommandRecord{RunID: "r1", Type: "pause"}
		res, err := s.CommandAppend(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Accepted || c.Seq != res.Seq || c.Seq != int64(i+1) {
			t.Errorf("append %d: result %+v, command seq %d; want accepted with seq %d on both", i+1, res, c.Seq, i+1)
		}
	}
}

// TestCommandTSReadsBackInUTCToTheMicrosecond: what the store returns is
// what a durable store reads back: a command's TS in UTC, to the
// microsecond, whatever zone and precision it was given in.
func TestCommandTSReadsBackInUTCToTheMicrosecond(t *testing.T) {
	t.Parallel()
	s := memory.New()
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", -5*3600))
	if _, err := s.CommandAppend(t.Context(), &durable.CommandRecord{RunID: "r1", Type: "pause", TS: durable.Time{Time: ts}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("CommandListAfter = %v, %v", got, err)
	}
	want := durable.NewTime(ts).Time
	if tt := got[0].TS.Time; !tt.Equal(want) || tt.Location() != time.UTC || tt.Nanosecond() != want.Nanosecond() {
		t.Errorf("TS read back = %v, want %v", tt, want)
	}
}
