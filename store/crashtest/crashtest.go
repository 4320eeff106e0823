// Package crashtest checks that the runtime survives a process kill at
// every persistence point of a store.
//
// Store wraps a backend and counts persistence calls (commits, ledger
// appends, run claims and releases, command and cursor writes, and the
// artifact writes of an Artifacts wrapper sharing its counter); at a
// chosen point it "kills the process": the call (and every later one)
// fails with ErrKilled. A kill can land before a write, after it (the write is
// durable but the caller never learns), or — for backends that do not
// commit atomically — between the ledger append and the state save of a
// commit, which is exactly what a crash inside the JSON-file store leaves.
// Run drives a workload once per kill point, restarts on the same data,
// and checks the invariants: the run ends with the same output, its
// terminal ledger records appear exactly once, no effect whose
// completion was durable is executed again, no handler runs twice under
// one key within a life, and the restart starts no child run the clean
// run did not. RunClaimsArtifacts does the
// same with a runtime claiming its runs and writing artifacts (memory
// notes, offloaded values): the restarted process is another claim owner,
// and no artifact ref may dangle.
package crashtest

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// ErrKilled is returned by every call after the kill point.
var ErrKilled = errors.New("crashtest: process killed")

// Phase says where in a persistence call the kill lands.
type Phase int

// Kill phases.
const (
	Before  Phase = iota // nothing of the call is written
	After                // the call is durable, the caller sees ErrKilled
	Between              // non-atomic commits: records appended, state not saved
)

func (p Phase) String() string {
	return [...]string{"before", "after", "between"}[p]
}

// Store is a killable wrapper. KillAt < 0 never kills.
type Store struct {
	store.Wrapper
	mu     sync.Mutex
	calls  int
	kinds  []string // the kind of each call, by index
	killAt int
	phase  Phase
	dead   bool
}

// Wrap returns inner, to be killed at persistence call killAt (0-based)
// in the given phase.
func Wrap(inner store.Store, killAt int, phase Phase) *Store {
	return &Store{Wrapper: store.Wrapper{Store: inner}, killAt: killAt, phase: phase}
}

// Calls returns how many persistence calls were made.
func (s *Store) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Kinds returns the kind of each persistence call made so far, by call
// index: "commit", "append", "claim", "release", "command", "cursor" or
// "artifact".
func (s *Store) Kinds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.kinds)
}

// Dead reports whether the kill happened.
func (s *Store) Dead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

// LedgerFindCompleted forwards the backend's fast path (reads are not
// persistence points).
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return store.FindCompleted(ctx, s.Store, runID, key)
}

func (s *Store) alive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return ErrKilled
	}
	return nil
}

// point decides the fate of the next persistence call, of the given kind.
func (s *Store) point(kind string) (kill bool, phase Phase, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return false, 0, ErrKilled
	}
	n := s.calls
	s.calls++
	s.kinds = append(s.kinds, kind)
	if n == s.killAt {
		s.dead = true
		return true, s.phase, nil
	}
	return false, 0, nil
}

// RunCommit is a persistence point.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	kill, phase, err := s.point("commit")
	if err != nil {
		return err
	}
	if !kill {
		return s.Store.RunCommit(ctx, p)
	}
	switch phase {
	case After:
		_ = s.Store.RunCommit(ctx, p)
	case Between:
		if !store.IsAtomic(s.Store) && len(p.Records) > 0 {
			_ = s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records)
		}
	}
	return ErrKilled
}

// LedgerAppend is a persistence point.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	return s.write("append", func() error { return s.Store.LedgerAppend(ctx, runID, records) })
}

// RunClaim is a persistence point: killed After, the claim is held by a
// process that is gone, and another owner gets the run only once it
// expired.
func (s *Store) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	return s.write("claim", func() error { return s.Wrapper.RunClaim(ctx, p) })
}

// RunRelease is a persistence point.
func (s *Store) RunRelease(ctx context.Context, runID, owner string) error {
	return s.write("release", func() error { return s.Wrapper.RunRelease(ctx, runID, owner) })
}

// CommandAppend is a persistence point (the kernel makes none; a host's
// command inbox does).
func (s *Store) CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error) {
	var res durable.CommandAppendResult
	err := s.write("command", func() (err error) {
		res, err = s.Store.CommandAppend(ctx, c)
		return err
	})
	return res, err
}

// CommandDeleteByRun is a persistence point.
func (s *Store) CommandDeleteByRun(ctx context.Context, runID string) (int, error) {
	var n int
	err := s.write("command", func() (err error) {
		n, err = s.Store.CommandDeleteByRun(ctx, runID)
		return err
	})
	return n, err
}

// CursorSave is a persistence point (made by a host's command consumer).
func (s *Store) CursorSave(ctx context.Context, consumer string, cursor int64) error {
	return s.write("cursor", func() error { return s.Store.CursorSave(ctx, consumer, cursor) })
}

// write makes the single write do at a persistence point of the given
// kind: a kill Before skips it, After does it and hides its result.
// Between means Before for a single write: it has no halves.
func (s *Store) write(kind string, do func() error) error {
	kill, phase, err := s.point(kind)
	if err != nil {
		return err
	}
	if !kill {
		return do()
	}
	if phase == After {
		_ = do()
	}
	return ErrKilled
}

// RunGet fails after the kill.
func (s *Store) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.Store.RunGet(ctx, runID)
}

// LedgerList fails after the kill.
func (s *Store) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.Store.LedgerList(ctx, p)
}

// RunList fails after the kill.
func (s *Store) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.Store.RunList(ctx, p)
}
