package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A write whose redo record would pass the log's bound (1e9 bytes, lowered
// here to 64 KiB) is refused with ErrTooLarge, whether it goes through the
// log's queue (a run the cache holds) or straight to the database (a
// command, a run the cache does not hold), and nothing of it is written.
// The store goes on taking every other write: the bound used to be
// treated as a broken log, which made the store refuse all writes until
// reopened.
func TestWriteOverTheRedoRecordLimitFailsAlone(t *testing.T) {
	t.Parallel()
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "db")
			cfg := sqlite.Config{Path: path, Synchronous: sync}
			const limit = 64 << 10
			big := strings.Repeat("x", limit+1)
			tooLarge := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, sqlite.ErrTooLarge) {
					t.Fatalf("%s: got %v, want ErrTooLarge", what, err)
				}
			}

			s := openWith(t, cfg)
			sqlite.SetRedoRecordLimit(s, limit)
			for _, id := range []string{"big", "other"} {
				if err := s.RunCommit(ctx, &store.CommitParams{Run: testRun(id), Create: true, RandomID: true}); err != nil {
					t.Fatal(err)
				}
			}
			// Through the queue: a record, and a state, too large.
			tooLarge("ledger append", s.LedgerAppend(ctx, "big", []*durable.StepRecord{
				{RunID: "big", StepID: "a", Status: durable.StepFailed, Error: big}}))
			r, err := s.RunGet(ctx, "big")
			if err != nil {
				t.Fatal(err)
			}
			version := r.Version
			r.Vars["blob"] = big
			tooLarge("run commit", s.RunCommit(ctx, &store.CommitParams{Run: r}))
			if r.Version != version {
				t.Fatalf("a refused commit moved the caller's run to version %d", r.Version)
			}
			// Straight to the database.
			_, err = s.CommandAppend(ctx, &durable.CommandRecord{RunID: "other", Type: "emit_event", Payload: map[string]any{"blob": big}})
			tooLarge("command append", err)

			// Every other write goes on.
			o, err := s.RunGet(ctx, "other")
			if err != nil {
				t.Fatal(err)
			}
			o.Vars["n"] = 1
			if err := s.RunCommit(ctx, &store.CommitParams{Run: o, Records: []*durable.StepRecord{
				{RunID: "other", StepID: "s1", Status: durable.StepCompleted}}}); err != nil {
				t.Fatalf("a small commit after the refusals: %v", err)
			}
			if _, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "other", Type: "pause", Payload: map[string]any{}}); err != nil {
				t.Fatalf("a small command after the refusals: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close after the refusals: %v", err)
			}

			// Reopened, its cache cold: "other"'s ledger is not known to
			// it, so its appends go straight to the database.
			s = openWith(t, cfg)
			sqlite.SetRedoRecordLimit(s, limit)
			tooLarge("ledger append of a run the cache does not hold", s.LedgerAppend(ctx, "other", []*durable.StepRecord{
				{RunID: "other", StepID: "s2", Status: durable.StepFailed, Error: big}}))
			if err := s.LedgerAppend(ctx, "other", []*durable.StepRecord{{RunID: "other", StepID: "s3", Status: durable.StepCompleted}}); err != nil {
				t.Fatalf("a small append after the refusal: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = openWith(t, cfg)
			if n, err := s.LedgerCount(ctx, "big"); err != nil || n != 0 {
				t.Errorf("big's ledger: %d records, %v; want none", n, err)
			}
			if b, err := s.RunGet(ctx, "big"); err != nil || b.Version != version || b.Vars["blob"] != nil {
				t.Errorf("big: %+v, %v; want version %d without the blob", b, err, version)
			}
			recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "other"})
			if err != nil || len(recs) != 2 || recs[0].StepID != "s1" || recs[1].StepID != "s3" || recs[1].Seq != 2 {
				t.Errorf("other's ledger: %d records, %v; want s1, s3 at seqs 1, 2", len(recs), err)
			}
			cmds, _, err := s.CommandListAfter(ctx, 0, 10)
			if err != nil || len(cmds) != 1 || cmds[0].Type != "pause" || cmds[0].Seq != 1 {
				t.Errorf("commands: %d, %v; want the pause alone, at seq 1", len(cmds), err)
			}
		})
	}
}
