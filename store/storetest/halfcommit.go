package storetest

import (
	"context"
	"errors"
	"sync"

	"github.com/abstractframework/abstractgateway/store"
)

// ErrHalfCommit is the error of a commit HalfCommit cut in half.
var ErrHalfCommit = errors.New("injected: saving the run state failed after its records were appended")

// HalfCommit is a non-atomic store (it embeds the Store interface, hiding
// the inner store's AtomicCommit) whose chosen RunCommit does what the
// JSON-file store does when it has appended a commit's records but cannot
// replace the state file: the records are durable, the state is not, and
// the commit fails with ErrHalfCommit. Later commits succeed (the failure
// was transient). It is for tests of what a failed commit leaves.
type HalfCommit struct {
	store.Store
	// FailAt is the non-create commit (counting from 1) that fails; Arm
	// makes the next one fail instead.
	FailAt int

	mu    sync.Mutex
	n     int
	armed bool
}

// Arm makes the next non-create commit fail.
func (s *HalfCommit) Arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

// RunCommit commits, or appends the records and fails when chosen.
func (s *HalfCommit) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if !p.Create {
		s.mu.Lock()
		s.n++
		fail := s.armed || s.n == s.FailAt
		s.armed = false
		s.mu.Unlock()
		if fail {
			if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
				return err
			}
			return ErrHalfCommit
		}
	}
	return s.Store.RunCommit(ctx, p)
}
