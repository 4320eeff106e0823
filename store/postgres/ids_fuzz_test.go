package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// pfNamesID reports whether err's text names id, as given or quoted.
func pfNamesID(err error, id string) bool {
	q := fmt.Sprintf("%q", id)
	return strings.Contains(err.Error(), id) || strings.Contains(err.Error(), q[1:len(q)-1])
}

// pfIDsOutcome is what one store did with the fuzzed ids.
type pfIDsOutcome struct {
	createErr  error
	run        []byte // the run RunGet gives, as JSON
	rec        []byte // its ledger record, as JSON
	cmdErr     error
	cmdID      string // the command id as listed
	dup        bool   // the second append was a duplicate
	cursor     int64
	claimErr   error
	secondHeld bool // a second owner's claim was refused
}

// FuzzPostgresIDs runs fuzzed ids and keys (run id, parent id, wait key,
// session id, idempotency key, command id used also as claim owner and
// cursor consumer; NUL, \x01, bytes that are not UTF-8, leading blanks,
// lengths past PostgreSQL's btree key limit) through the public API of the
// PostgreSQL store and, as a differential oracle, the memory store. It
// checks that:
//   - a create is accepted or refused by both alike, except that
//     PostgreSQL refuses ids past the btree key limit, with
//     store.ErrInvalidID (docs/compatibility.md); a refusal names the id;
//   - an accepted run reads back byte-identical (as JSON) in both, with its
//     record; it is listed by its wait key, its session id and its parent
//     as read back (RunList, RunListChildren), and its completed record is
//     found by the idempotency key as read back; by the keys as given
//     when they are UTF-8;
//   - a command with the fuzzed id is accepted or refused alike (a
//     refusal names the id), reads back with the same id in both, and a
//     second append is a duplicate in both;
//   - a cursor saved under the fuzzed consumer id loads back in both;
//   - a claim under the fuzzed owner succeeds in both, and another owner's
//     claim is refused in both.
func FuzzPostgresIDs(f *testing.F) {
	f.Add("run-1", "parent", "key", "session", "ikey", "cmd-1", uint16(0))
	f.Add("run\x00\x01id", "parent\x00", "answer\x00x", "session\x00a", "key\x00", "c\x00\x01", uint16(0))
	f.Add("run-\xff", "p", "key\xfe", "s\xff", "k\xfe", "c-\xff", uint16(0))
	f.Add("r", "p\xff", "", "", "", "", uint16(0))
	f.Add(" run ", " p ", " k ", " s ", " i ", " c ", uint16(0))
	f.Add("r", "", "k", "", "i", "c", uint16(3000))
	f.Add("r", "p", strings.Repeat("w", 3000), strings.Repeat("s", 3000), strings.Repeat("i", 3000), "c", uint16(0))
	f.Add("\x01", "\x01\x02", "\x01\x01", "\x01\x03ff", "\x02", "\x01\x03ff", uint16(0))
	f.Add("é\u2028\U0001F600", "\ufffd", "\ufeff", "\u0085", "\ud7ff", "\t", uint16(5))

	setup := pfFuzzSetup(f)
	f.Fuzz(func(t *testing.T, runID, parentID, waitKey, sessionID, ikey, cmdID string, pad uint16) {
		env := setup(t)
		t.Cleanup(func() { env.wipe(t) })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if runID == "" {
			runID = "r" // a run needs an id (refused alike; not what this target looks at)
		}
		runID += strings.Repeat("x", int(pad)%4000)
		t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)

		do := func(s store.Store) (o pfIDsOutcome) {
			r := &durable.RunState{RunID: runID, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
				ParentRunID: parentID, SessionID: sessionID, ActorID: sessionID, Vars: map[string]any{},
				CreatedAt: durable.NewTime(t0), UpdatedAt: durable.NewTime(t0),
				Waiting: &durable.WaitState{Reason: durable.WaitEvent, WaitKey: waitKey, ResumeToNode: "n",
					Until: durable.NewTime(t0.Add(time.Minute))}}
			rec := &durable.StepRecord{RunID: runID, StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
				IdempotencyKey: ikey, Attempt: 1, StartedAt: durable.NewTime(t0)}
			o.createErr = s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec}})
			if o.createErr == nil {
				got, err := s.RunGet(ctx, runID)
				if err != nil {
					t.Fatalf("%T: RunGet of the run just created: %v", s, err)
				}
				o.run, _ = durable.MarshalRun(got, pyjson.Line)
				recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
				if err != nil || len(recs) != 1 {
					t.Fatalf("%T: LedgerList = %d records, %v", s, len(recs), err)
				}
				o.rec, _ = durable.MarshalRecord(recs[0], pyjson.Line)
				pfCheckFindable(t, ctx, s, got, recs[0], waitKey, sessionID, parentID, ikey)
			}
			c := &durable.CommandRecord{CommandID: cmdID, RunID: runID, Type: "pause", TS: durable.NewTime(t0)}
			res, err := s.CommandAppend(ctx, c)
			o.cmdErr = err
			if err == nil {
				page, _, err := s.CommandListAfter(ctx, res.Seq-1, 1)
				if err != nil || len(page) != 1 {
					t.Fatalf("%T: listing the command just appended: %d, %v", s, len(page), err)
				}
				o.cmdID = page[0].CommandID
				if o.cmdID != c.CommandID {
					t.Fatalf("%T: command %q listed as %q", s, c.CommandID, o.cmdID)
				}
				// c.CommandID is the id as appended: trimmed, or a new
				// random one for a blank id.
				res2, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.CommandID, RunID: runID, Type: "pause"})
				if err != nil {
					t.Fatalf("%T: second append of command %q: %v", s, cmdID, err)
				}
				o.dup = res2.Duplicate && res2.Seq == res.Seq
			}
			if err := s.CursorSave(ctx, cmdID, 7); err != nil {
				t.Fatalf("%T: CursorSave(%q): %v", s, cmdID, err)
			}
			if o.cursor, err = s.CursorLoad(ctx, cmdID); err != nil {
				t.Fatalf("%T: CursorLoad(%q): %v", s, cmdID, err)
			}
			if cl, ok := s.(store.RunClaimer); ok {
				o.claimErr = cl.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: cmdID, TTL: time.Minute})
				if o.claimErr == nil {
					err := cl.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: cmdID + "-other", TTL: time.Minute})
					var held *store.ClaimHeldError
					o.secondHeld = errors.As(err, &held) && held.Owner == cmdID
					if err := cl.RunRelease(ctx, runID, cmdID); err != nil {
						t.Fatalf("%T: RunRelease: %v", s, err)
					}
				}
			}
			return o
		}
		mem := do(memory.New())
		pg := do(env.st)

		tooLong := len(runID) > 2000 || len(parentID) > 2000 || len(cmdID) > 2000
		switch {
		case mem.createErr == nil && pg.createErr != nil:
			if !tooLong || !errors.Is(pg.createErr, store.ErrInvalidID) {
				t.Fatalf("postgres refused a run the memory store took: %v", pg.createErr)
			}
		case mem.createErr != nil && pg.createErr == nil:
			t.Fatalf("postgres took a run the memory store refused (%v)", mem.createErr)
		case mem.createErr == nil:
			if !bytes.Equal(mem.run, pg.run) {
				t.Fatalf("the run reads back differently:\nmemory   %s\npostgres %s", mem.run, pg.run)
			}
			if !bytes.Equal(mem.rec, pg.rec) {
				t.Fatalf("the record reads back differently:\nmemory   %s\npostgres %s", mem.rec, pg.rec)
			}
		}
		if err := pg.createErr; err != nil && !pfNamesID(err, runID) && !pfNamesID(err, parentID) {
			t.Fatalf("postgres create error names neither run id %q nor parent %q: %v", runID, parentID, err)
		}
		switch {
		case mem.cmdErr == nil && pg.cmdErr != nil:
			if !tooLong || !errors.Is(pg.cmdErr, store.ErrInvalidID) && !strings.Contains(pg.cmdErr.Error(), "index row size") {
				t.Fatalf("postgres refused a command the memory store took: %v", pg.cmdErr)
			}
		case mem.cmdErr != nil && pg.cmdErr == nil:
			t.Fatalf("postgres took a command the memory store refused (%v)", mem.cmdErr)
		case mem.cmdErr == nil && (mem.cmdID != pg.cmdID && pyval.Strip(cmdID) != "" || !mem.dup || !pg.dup):
			t.Fatalf("command %q: memory listed %q (duplicate %v), postgres %q (duplicate %v)", cmdID, mem.cmdID, mem.dup, pg.cmdID, pg.dup)
		}
		if mem.cursor != 7 || pg.cursor != 7 {
			t.Fatalf("cursor of consumer %q loads back as %d (memory), %d (postgres); want 7", cmdID, mem.cursor, pg.cursor)
		}
		if (pg.claimErr == nil) != (mem.claimErr == nil) || pg.secondHeld != mem.secondHeld {
			if !(tooLong && pg.claimErr != nil) {
				t.Fatalf("claim of %q by %q: memory %v (second refused %v), postgres %v (second refused %v)",
					runID, cmdID, mem.claimErr, mem.secondHeld, pg.claimErr, pg.secondHeld)
			}
		}
	})
}

// pfCheckFindable checks that the run got and its record rec (as read
// back) are found by their keys as read back and, when those are UTF-8,
// as given.
func pfCheckFindable(t *testing.T, ctx context.Context, s store.Store, got *durable.RunState, rec *durable.StepRecord,
	waitKey, sessionID, parentID, ikey string) {
	t.Helper()
	has := func(runs []*durable.RunState, err error) bool {
		return err == nil && slices.ContainsFunc(runs, func(r *durable.RunState) bool { return r.RunID == got.RunID })
	}
	type probe struct {
		what, given, back string
		list              func(key string) ([]*durable.RunState, error)
	}
	probes := []probe{
		{"wait key", waitKey, got.Waiting.WaitKey, func(k string) ([]*durable.RunState, error) {
			return s.RunList(ctx, &store.RunListParams{WaitKeys: []string{k}})
		}},
		{"session id", sessionID, got.SessionID, func(k string) ([]*durable.RunState, error) {
			return s.RunList(ctx, &store.RunListParams{SessionID: k})
		}},
		{"parent id", parentID, got.ParentRunID, func(k string) ([]*durable.RunState, error) {
			return s.RunListChildren(ctx, k, "")
		}},
	}
	for _, p := range probes {
		if p.back == "" {
			continue // an empty filter filters nothing
		}
		if !has(p.list(p.back)) {
			t.Fatalf("%T: run not listed by its %s as read back %q (given %q)", s, p.what, p.back, p.given)
		}
		if utf8.ValidString(p.given) && p.given != "" && !has(p.list(p.given)) {
			t.Fatalf("%T: run not listed by its %s as given %q", s, p.what, p.given)
		}
	}
	if rec.IdempotencyKey == "" {
		return
	}
	for _, k := range []string{rec.IdempotencyKey, ikey} {
		if k != rec.IdempotencyKey && !utf8.ValidString(k) {
			continue
		}
		f, ok := s.(store.LedgerFinder)
		if !ok {
			return
		}
		found, err := f.LedgerFindCompleted(ctx, got.RunID, k)
		if err != nil || found == nil || found.Seq != rec.Seq {
			t.Fatalf("%T: LedgerFindCompleted(%q) = %+v, %v; want seq %d", s, k, found, err, rec.Seq)
		}
	}
}
