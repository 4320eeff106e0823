package store_test

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

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
