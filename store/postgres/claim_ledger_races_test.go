package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestRefusedClaimLeavesTheRowAsItIs: RunClaim's upsert decides
// twice whether it takes the claim, once for owner and once for
// expires_at, and each decision reads clock_timestamp() afresh (a
// volatile function). When the holder's claim expires between the two
// readings, the owner is kept (not yet expired at the first reading) but
// expires_at is replaced by the claimer's (expired at the second): the
// claimer is refused (ClaimHeldError), and the holder's claim is
// extended by the claimer's TTL. A dead holder then blocks the run a
// whole TTL more, and the doc comment's promise ("A refused claim leaves
// the row as it is") is broken. Long owner names (equal length, so the
// owner comparison runs memcmp over a detoasted value) widen the gap
// between the two readings from under a microsecond to milliseconds, so
// the test sees it within a few expiries; the race is the same with
// short names, only rarer.
func TestRefusedClaimLeavesTheRowAsItIs(t *testing.T) {
	testURL(t)
	s := openSchema(t, testSchema(t))
	ctx := t.Context()
	long := strings.Repeat("x", 4<<20)
	holder, taker := long+"A", long+"B"
	const id = "run-expiring"
	deadline := time.Now().Add(6 * time.Second)
	for cycle := 0; time.Now().Before(deadline); cycle++ {
		_ = s.RunRelease(ctx, id, taker)
		if err := s.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: holder, TTL: 60 * time.Millisecond}); err != nil {
			t.Fatalf("cycle %d: holder's claim: %v", cycle, err)
		}
		held, _, err := s.ClaimExpiry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for time.Now().Before(deadline) {
			err := s.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: taker, TTL: time.Minute})
			if err == nil {
				break // taken once expired: this cycle did not hit the window
			}
			var he *store.ClaimHeldError
			if !errors.As(err, &he) {
				t.Fatalf("claim: %v", err)
			}
			expires, serverNow, err := s.ClaimExpiry(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !expires.Equal(held) {
				t.Fatalf("cycle %d: a refused claim (holder still named) moved the holder's expiry from %v to %v "+
					"(server now %v): the holder's expired claim was extended by the refused claimer's TTL",
					cycle, held.UTC(), expires.UTC(), serverNow.UTC())
			}
		}
	}
	t.Log("no refused claim changed the row")
}

// TestLedgerDeleteDuringAppend: LedgerDelete takes no lock, while
// appends allocate seqs under the run's ledger lock (MAX(seq)+1 read
// after the lock). A delete that runs while an append is between its
// INSERT and its commit (the commit's WAL flush, a NOTIFY's commit lock;
// here a trigger that sleeps) deletes the records it sees and leaves the
// append's: the run's ledger ends up holding one record at seq 3, an
// outcome of neither order (append then delete: empty; delete then
// append: the record at seq 1, since "a later append starts again at seq
// 1"). A follower or a hash chain then sees a ledger starting at seq 3
// whose record chains to a deleted one, and LedgerCount says 3 for one
// record.
func TestLedgerDeleteDuringAppend(t *testing.T) {
	url := testURL(t)
	schema := testSchema(t)
	ctx := t.Context()
	app := "claimrace_" + schema
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	s, err := postgres.New(ctx, postgres.Config{URL: url + sep + "application_name=" + app, Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "run-deleted"
	if err := s.LedgerAppend(ctx, id, []*durable.StepRecord{testRecord(id, "a"), testRecord(id, "b")}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// An append that takes a moment between its INSERT and its commit.
	for _, q := range []string{
		`CREATE FUNCTION ` + schema + `.slow_append() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$`,
		`CREATE TRIGGER slow_append AFTER INSERT ON ` + schema + `.ledger FOR EACH STATEMENT EXECUTE FUNCTION ` + schema + `.slow_append()`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rec := testRecord(id, "c")
	done := make(chan error, 1)
	go func() { done <- s.LedgerAppend(ctx, id, []*durable.StepRecord{rec}) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity, pg_stat_clear_snapshot()
			WHERE application_name = $1 AND wait_event = 'PgSleep'`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the append never reached its trigger")
		}
		time.Sleep(2 * time.Millisecond)
	}
	deleted, err := s.LedgerDelete(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	count, _ := s.LedgerCount(ctx, id)
	var seqs []int64
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	serial := len(recs) == 0 && deleted == 3 || len(recs) == 1 && recs[0].Seq == 1 && deleted == 2
	if !serial {
		t.Fatalf("LedgerDelete during an append deleted %d records and left seqs %v (LedgerCount %d, the append's record got seq %d); "+
			"want the outcome of one order or the other: nothing left (3 deleted), or the appended record alone at seq 1 (2 deleted)",
			deleted, seqs, count, rec.Seq)
	}
}

// TestClaimRefusalNamesTheHolder: a refused claim is a
// store.ClaimHeldError whose Owner names the runner holding the run (the
// runtime passes it on as RunClaimParams.From, where "" means "take it
// from anyone"). RunClaim read the holder in a statement of its own,
// after the refused upsert committed, so a holder that released the run
// in between left Owner "" (and one that was replaced named the wrong
// runner). The upsert now returns the holder itself.
func TestClaimRefusalNamesTheHolder(t *testing.T) {
	testURL(t)
	t.Parallel()
	rs := openRunners(t, 2)
	holderStore, taker := rs[0], rs[1]
	ctx := t.Context()

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A runner that takes the run briefly (an event delivery, a
			// tick between waits) and lets it go.
			if err := holderStore.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "holder", TTL: time.Minute}); err == nil {
				_ = holderStore.RunRelease(ctx, "r", "holder")
			}
		}
	}()
	defer func() { close(stop); <-done }()

	// Every refusal must name the holder. When the holder was read after
	// the refused upsert, about one refusal in three named no one, the
	// first within ~0.1 s: 300 refusals or 5 s, whichever comes first.
	refused := 0
	deadline := time.Now().Add(5 * time.Second)
	for refused < 300 && time.Now().Before(deadline) {
		err := taker.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "taker", TTL: time.Minute})
		if err == nil {
			if err := taker.RunRelease(ctx, "r", "taker"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var held *store.ClaimHeldError
		if !errors.As(err, &held) {
			t.Fatalf("claim: %v; want nil or a ClaimHeldError", err)
		}
		refused++
		if held.Owner != "holder" {
			t.Fatalf("claim refused %d times; this refusal names owner %q (%v), want %q: the only other runner",
				refused, held.Owner, err, "holder")
		}
	}
	t.Logf("%d refusals, each naming the holder", refused)
}
