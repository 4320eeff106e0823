package hashchain_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A record whose started_at/ended_at is an instant at or before
// 0001-01-01T00:00:00 UTC (year 0, or within a microsecond of it) is
// hashed and written as "0001-01-01T00:00:00+00:00" (FormatTime clamps),
// which reads back as 00:00:00.000001 with that text kept. The memory
// store's (and observe's) stored copy took NewTime's value without the
// text, so it wrote ".000001", its hash no longer matched, and the
// chain failed to verify on a memory store while it verified on the
// JSON store.
func TestReviewMinTimeChainVerifiesOnMemory(t *testing.T) {
	ctx := context.Background()
	backend := memory.New()
	obs := observe.Wrap(backend)
	st := hashchain.Wrap(obs)
	sub := obs.Subscribe("r", 10)
	defer sub.Cancel()
	times := []time.Time{
		time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 999, time.UTC),
	}
	for _, ts := range times {
		rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted,
			StartedAt: durable.Time{Time: ts}, EndedAt: durable.Time{Time: ts}}
		if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Errorf("chain on the memory store does not verify: %+v", rep.Errors)
	}
	var notified []*durable.StepRecord
	for len(notified) < len(times) {
		ev := <-sub.C
		notified = append(notified, ev.Records...)
	}
	if rep := hashchain.VerifyLedgerChain(notified); !rep.OK {
		t.Errorf("notified records do not verify: %+v", rep.Errors)
	}
	// What the memory store returns is what a durable store reads back.
	for i, r := range recs {
		b, _ := durable.MarshalRecord(r, pyjson.Line)
		back, err := durable.UnmarshalRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := durable.MarshalRecord(back, pyjson.Line)
		if string(b) != string(b2) {
			t.Errorf("record %d: memory read %s\nround trip %s", i, b, b2)
		}
	}
}

// The SQLite store's hot cache kept the same copy: a listing served from
// it returned the record with the other text, and the chain failed there
// too (a listing read from the database verified).
func TestReviewMinTimeChainVerifiesOnSQLiteCache(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite3")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := hashchain.Wrap(s)
	run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted,
		StartedAt: durable.Time{Time: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Errorf("chain read from the SQLite store does not verify: %+v", rep.Errors)
	}
}
