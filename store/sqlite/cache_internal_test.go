package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
)

// TestHotCache_Bounds: the accounted size is what the entries hold, never
// above the limit after an operation, and the least recently used run
// goes first.
func TestHotCache_Bounds(t *testing.T) {
	t.Parallel()
	c := newHotCache(4 * (entryOverhead + 100))
	// state is a run_json text of exactly 100 bytes.
	state := func(id string) string {
		t := `{"run_id": "` + id + `", "status": "running", "pad": "`
		return t + strings.Repeat("x", 100-len(t)-2) + `"}`
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		c.putState(id, state(id), 1, false)
	}
	if c.state("a") == nil { // a becomes the most recently used
		t.Fatal("a was evicted although the cache has room for four runs")
	}
	c.putState("e", state("e"), 1, false) // evicts b, the least recently used
	if c.state("b") != nil || c.state("a") == nil || c.state("e") == nil {
		t.Fatal("eviction did not take the least recently used run")
	}
	rec := func(seq int64) *frozen.Record { return frozen.NewRecord(&durable.StepRecord{Seq: seq}) }
	c.appended("a", []*frozen.Record{rec(1), rec(2)}, 40)
	if recs, ok := c.ledger("a"); !ok || len(recs) != 2 {
		t.Fatalf("ledger(a) = %v, %v", recs, ok)
	}
	if n, ok := c.lastSeq("a"); !ok || n != 2 {
		t.Fatalf("lastSeq(a) = %d, %v", n, ok)
	}
	c.appended("x", []*frozen.Record{rec(5)}, 10) // ledger not from seq 1: only the seq is known
	if _, ok := c.ledger("x"); ok {
		t.Fatal("a ledger seen from seq 5 on was taken as whole")
	}
	if n, ok := c.lastSeq("x"); !ok || n != 5 {
		t.Fatalf("lastSeq(x) = %d, %v", n, ok)
	}
	if c.size > c.limit {
		t.Fatalf("size %d above limit %d", c.size, c.limit)
	}
	var sum int64
	for _, el := range c.runs {
		h := el.Value.(*hotRun)
		sum += entryOverhead + h.stateSize + h.ledgerSize
	}
	if sum != c.size {
		t.Fatalf("accounted size %d, entries hold %d", c.size, sum)
	}
	c.putState("huge", state("huge")+strings.Repeat(" ", int(c.limit)), 1, false) // larger than an eighth of the cache: not kept
	if c.state("huge") != nil {
		t.Fatal("a state larger than an eighth of the cache was cached")
	}
	c.ledgerDeleted("a")
	if recs, ok := c.ledger("a"); !ok || len(recs) != 0 {
		t.Fatalf("after delete: ledger(a) = %v, %v; want known and empty", recs, ok)
	}
}

// TestCheckpointPages: the WAL checkpoint threshold is the configured one,
// by default DefaultCheckpointPages, 10,000 for a shared store, or
// SQLite's 1,000 with FULL.
func TestCheckpointPages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sync      string
		shared    bool
		cfg, want int
	}{{"", false, 0, DefaultCheckpointPages}, {"", false, 250, 250}, {"", true, 0, 10000},
		{"FULL", false, 0, 1000}, {"FULL", false, 5000, 5000}} {
		cfgPages, want := c.cfg, c.want
		s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db"), CheckpointPages: cfgPages,
			Synchronous: c.sync, Shared: c.shared})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := s.wconn.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&got); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if got != want {
			t.Errorf("CheckpointPages %d: wal_autocheckpoint = %d, want %d", cfgPages, got, want)
		}
	}
}
