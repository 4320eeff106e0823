package storetest_test

// The conformance tier (store/storetest, store/e2etest,
// store/crashtest): issue #2 requires the three suites to run on every
// store, the decorators (hash chain, observe, offload) stacked over each
// backend included. These tests run them, and one decorator promise the
// suites never exercise, on such stores.

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/e2etest"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// specStack is the decorator order of spec §4.10 (outermost first:
// observe → offload → hash chain → backend), as the gateway builds it.
func specStack(inner store.Store) store.Store {
	return observe.Wrap(offload.Wrap(hashchain.Wrap(inner), artifact.NewMemory(), offload.Config{}))
}

func openJSONFile(t *testing.T) *jsonfile.Store {
	t.Helper()
	s, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestSuiteOnHashChainedStack: docs/writing-a-store.md and the
// storetest package doc say every backend passes storetest.Run, and issue
// #2 requires it of the decorated stores too (spec §4.10 stack). The
// stack over the in-memory store is a correct store, yet
// RoundTrip/GoValues fails on it: it compares LedgerList with a clone of
// the record taken *before* the commit, without the record_hash a hash
// chain adds (hashes are part of the stored JSON, §4.6), so no
// hash-chained store can pass the suite.
func TestSuiteOnHashChainedStack(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return specStack(memory.New()) })
	})
	t.Run("jsonfile", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return specStack(openJSONFile(t)) })
	})
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return specStack(s)
		})
	})
}

// TestSuiteOnDecoratedStoreWithoutClaims: the suite tests
// store.RunClaimer "when the store implements them" (storetest package
// doc) by a type assertion, but store.Wrapper gives every decorator
// RunClaim/RunRelease (returning errors.ErrUnsupported when the wrapped
// store has no claims; runtime.innermostClaims knows this). So the
// RunClaimer group runs, and fails, on any decorator over the JSON-file
// store, a store the suite must pass (issue #2). The Ledger/Listener test
// already skips on ErrUnsupported; the claim tests do not.
func TestSuiteOnDecoratedStoreWithoutClaims(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return observe.Wrap(openJSONFile(t)) })
}

// TestE2EOnDecoratedStoreWithoutClaims: e2etest.Run "every backend
// runs it" (e2etest package doc; issue #2 includes the decorators). Its
// ConcurrentRunners scenario skips stores without claims by asserting
// store.RunClaimer on the outer store (e2etest/concurrent.go
// concurrentRunners), which every store.Wrapper satisfies; over the
// JSON-file store the runtime then refuses Config.Claims and the scenario
// fails instead of skipping.
func TestE2EOnDecoratedStoreWithoutClaims(t *testing.T) {
	e2etest.Run(t, func(t *testing.T) store.Store { return observe.Wrap(openJSONFile(t)) })
}

// TestObserveNotifiesRecordsOfRefusedWrites: store/observe promises
// to notify "after every successful append ... the records exactly as
// stored" and, after a failed write, "the records the store appended
// anyway (it gave them a Seq)" (observe.go, notifyAppended). It takes any
// Seq > 0 for one the store gave, but the Store contract lets a caller
// leave a Seq in a record ("The store sets each record's Seq, whatever
// the caller left in it", storetest Ledger/CallerSeqOverwritten, e.g. a
// record cloned from a listed one). A commit refused with ErrConflict
// ("writes nothing", store.go RunCommit) or an append refused outright is
// then announced to followers as records that were never stored, with a
// made-up seq; a refused append with an empty run id is even broadcast to
// every subscription (RunID "" means all runs). Followers that print
// events (cmd/abstractgateway bundle_run_driver.printRecords) show them.
func TestObserveNotifiesRecordsOfRefusedWrites(t *testing.T) {
	backends := map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memory.New() },
		"sqlite": func(t *testing.T) store.Store {
			s, err := sqlite.New(context.Background(), sqlite.Config{Path: t.TempDir() + "/db.sqlite3"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			obs := observe.Wrap(open(t))
			run := &durable.RunState{RunID: "run-1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
				Vars: map[string]any{}, CreatedAt: durable.NewTime(time.Now()), UpdatedAt: durable.NewTime(time.Now())}
			if err := obs.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
				t.Fatal(err)
			}
			sub := obs.Subscribe("run-1", 8)
			defer sub.Cancel()
			rec := func(seq int64) *durable.StepRecord {
				return &durable.StepRecord{RunID: "run-1", StepID: "s", NodeID: "n", Status: durable.StepCompleted,
					StartedAt: durable.NewTime(time.Now()), Attempt: 1, Seq: seq}
			}

			stale := run.Clone()
			stale.Version = 7
			err := obs.RunCommit(ctx, &store.CommitParams{Run: stale, Records: []*durable.StepRecord{rec(42)}})
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("stale commit: err = %v, want ErrConflict", err)
			}
			err = obs.LedgerAppend(ctx, "", []*durable.StepRecord{rec(3)})
			if err == nil {
				t.Fatal("append with an empty run id succeeded")
			}
			if n, _ := obs.LedgerCount(ctx, "run-1"); n != 0 {
				t.Fatalf("the refused writes stored %d records", n)
			}
			for {
				select {
				case ev := <-sub.C:
					if len(ev.Records) > 0 {
						t.Errorf("followers notified of %d record(s) (seq %d, run %q) that were never stored (ledger is empty)",
							len(ev.Records), ev.Records[0].Seq, ev.RunID)
					}
					continue
				default:
				}
				break
			}
		})
	}
}
