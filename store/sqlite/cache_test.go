package sqlite_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestExclusive_SecondOpenFails: a store owns its file; a second store
// (another process, in real life) is refused with an error that says why.
func TestExclusive_SecondOpenFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	open(t, path)
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	if err == nil {
		_ = s.Close()
		t.Fatal("a second store opened a file another store owns")
	}
	if !strings.Contains(err.Error(), "Config.Shared") {
		t.Fatalf("error does not say why: %v", err)
	}
}

// TestCache_ReadsMatchDisk: what a store serves from its cache right after
// a commit is, Go types included, what a fresh store reads from the file.
func TestCache_ReadsMatchDisk(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openWith(t, sqlite.Config{Path: path})
	now := durable.NewTime(time.Date(2026, 11, 30, 4, 5, 6, 789000, time.UTC))
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "ask",
		Vars: map[string]any{"n": 3, "f": 1.0, "list": []string{"a", "b"}, "m": map[string]string{"k": "v"},
			"nested": map[string]any{"x": []any{int64(7), nil}}},
		Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:r1:ask", ResultKey: "answer",
			Choices: []string{"yes"}, Details: map[string]any{"d": 2}},
		CreatedAt: now, UpdatedAt: now}
	recs := []*durable.StepRecord{
		{RunID: "r1", StepID: "s1", NodeID: "ask", Status: durable.StepWaiting, StartedAt: now,
			Effect: &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "Go?", "n": 1}},
			Result: map[string]any{"wait": map[string]any{"reason": "user"}}},
		{RunID: "r1", StepID: "s2", NodeID: "ask", Status: durable.StepCompleted, IdempotencyKey: "k1",
			Result: []string{"done"}, Extra: map[string]any{"newer_field": 1.5}},
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: recs, Create: true}); err != nil {
		t.Fatal(err)
	}
	// The caller keeps using its objects: the cache must not see that.
	r.Vars["n"] = 99
	recs[0].Effect.Payload["prompt"] = "changed"

	hot, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	hotLedger, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	hotFound, err := s.LedgerFindCompleted(ctx, "r1", "k1")
	if err != nil || hotFound == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v", hotFound, err)
	}
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 2 {
		t.Fatalf("LedgerCount = %d, %v; want 2", n, err)
	}
	if hot.Vars["n"] != json.Number("3") {
		t.Fatalf("hot read: vars.n = %#v; want json.Number(\"3\") as read from disk", hot.Vars["n"])
	}
	// Handing out copies: changing what a read returned changes nothing.
	hot2, _ := s.RunGet(ctx, "r1")
	hot2.Vars["n"] = "mutated"
	hotLedger2, _ := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	hotLedger2[0].Effect.Payload["prompt"] = "mutated"

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cold := openWith(t, sqlite.Config{Path: path, Shared: true}) // also: a file owned before opens shared
	disk, err := cold.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	diskLedger, err := cold.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	diskFound, err := cold.LedgerFindCompleted(ctx, "r1", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(hot, disk) {
		t.Errorf("state: cached %#v\ndisk %#v", hot, disk)
	}
	if !reflect.DeepEqual(hotLedger, diskLedger) {
		t.Errorf("ledger: cached %#v\ndisk %#v", hotLedger, diskLedger)
	}
	if !reflect.DeepEqual(hotFound, diskFound) {
		t.Errorf("found record: cached %#v\ndisk %#v", hotFound, diskFound)
	}
}

// TestCache_ManyRunsSmallCache: with a cache far smaller than the data,
// every read is still right (evicted runs come from the file).
func TestCache_ManyRunsSmallCache(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openWith(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "db"), CacheBytes: 4096})
	const runs = 60
	for i := range runs {
		id := "run-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('A'+i/26))
		r := &durable.RunState{RunID: id, Status: durable.RunRunning, Vars: map[string]any{"i": i}}
		rec := &durable.StepRecord{RunID: id, StepID: "s", Status: durable.StepCompleted, Result: i}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}, Create: true}); err != nil {
			t.Fatal(err)
		}
		r.Status = durable.RunCompleted
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{{RunID: id, StepID: "t", Status: durable.StepCompleted}}}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.RunList(ctx, &store.RunListParams{Limit: runs})
	if err != nil || len(list) != runs {
		t.Fatalf("RunList: %d runs, %v", len(list), err)
	}
	for _, r := range list {
		got, err := s.RunGet(ctx, r.RunID)
		if err != nil || got.Version != 2 || got.Status != durable.RunCompleted || got.Vars["i"] != r.Vars["i"] {
			t.Fatalf("RunGet(%s) = %+v, %v", r.RunID, got, err)
		}
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: r.RunID})
		if err != nil || len(recs) != 2 || recs[0].Seq != 1 || recs[1].Seq != 2 || recs[1].StepID != "t" {
			t.Fatalf("LedgerList(%s) = %+v, %v", r.RunID, recs, err)
		}
	}
}

// TestCache_RunReadFromDiskKeepsItsVersion: a run the cache does not hold
// (here, after a reopen) is read from the file and kept; the next read,
// served from the cache, answers the same version, a commit at that
// version succeeds, and the file then holds it. Were the cache to keep the
// read at another version, the hot read would answer a version the file
// does not have, and the commit made from it would be refused as stale or
// make a write that cannot be applied.
func TestCache_RunReadFromDiskKeepsItsVersion(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]sqlite.Config{"redo log": {}, "no redo log": {NoRedoLog: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openWith(t, cfg)
			r := testRun("r1")
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openWith(t, cfg)
			for i, from := range []string{"the file", "the cache"} {
				got, err := s.RunGet(ctx, "r1")
				if err != nil {
					t.Fatal(err)
				}
				if got.Version != 1 {
					t.Fatalf("read %d (from %s): version %d, want 1", i+1, from, got.Version)
				}
				r = got
			}
			r.CurrentNode = "next"
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
				t.Fatalf("commit at the version read: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openWith(t, cfg)
			got, err := s.RunGet(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != 2 || got.CurrentNode != "next" {
				t.Fatalf("after a reopen: version %d at %q, want 2 at \"next\"", got.Version, got.CurrentNode)
			}
		})
	}
}
