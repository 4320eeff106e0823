// Package crashtest checks that the runtime survives a process kill at
// every persistence point of a store.
//
// Store wraps a backend and counts persistence calls; at a chosen point it
// "kills the process": the call (and every later one) fails with
// ErrKilled. A kill can land before a write, after it (the write is
// durable but the caller never learns), or — for backends that do not
// commit atomically — between the ledger append and the state save of a
// commit, which is exactly what a crash inside the JSON-file store leaves.
// Run drives a workload once per kill point, restarts on the same data,
// and checks the invariants: the run ends with the same output, its
// terminal ledger records appear exactly once, and no effect whose
// completion was durable is executed again.
package crashtest

import (
	"context"
	"errors"
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

// point decides the fate of the next persistence call.
func (s *Store) point() (kill bool, phase Phase, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return false, 0, ErrKilled
	}
	n := s.calls
	s.calls++
	if n == s.killAt {
		s.dead = true
		return true, s.phase, nil
	}
	return false, 0, nil
}

// RunCommit is a persistence point.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	kill, phase, err := s.point()
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
	kill, phase, err := s.point()
	if err != nil {
		return err
	}
	if kill && phase == After {
		_ = s.Store.LedgerAppend(ctx, runID, records)
	}
	if kill {
		return ErrKilled
	}
	return s.Store.LedgerAppend(ctx, runID, records)
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
