package sqlite

import (
	"context"
	"sync/atomic"
	"time"
)

// DefaultIdleCheckpoint is the IdleCheckpoint of a zero Config.
const DefaultIdleCheckpoint = 500 * time.Millisecond

// idleCheckpointer folds the WAL of a store that owns its file back into
// the database when the store has been quiet for a while, so that the
// commits of a burst do not stall on a checkpoint (folding 10,000 pages
// back and fsyncing took ~60 ms on the benchmark machine). The WAL file
// is kept, not truncated: the next burst writes over pages the file (and
// the kernel's cache) already has, which costs less than growing a file
// (a 1,000-run W1 burst after a quiet period ran 15–20 % faster than
// after a truncation). CheckpointPages bounds the file, and SQLite
// removes it when the store closes.
//
// A write only counts itself (an atomic add: no wake-up per commit). A
// goroutine looks every idle period and checkpoints, in the writer turn
// like any write, once a whole period has passed without a write.
type idleCheckpointer struct {
	idle   time.Duration
	writes atomic.Int64  // writes committed so far
	done   chan struct{} // closed when the goroutine has returned
	cancel context.CancelFunc
	// folded receives a value after each checkpoint, for tests.
	folded chan struct{}
}

func (s *Store) startIdleCheckpoints(idle time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.ckpt = &idleCheckpointer{idle: idle, done: make(chan struct{}), cancel: cancel, folded: make(chan struct{}, 1)}
	go s.checkpointWhenIdle(ctx)
}

// wrote records a committed write.
func (c *idleCheckpointer) wrote() { c.writes.Add(1) }

// stop ends the goroutine (a checkpoint in progress completes first).
func (c *idleCheckpointer) stop() {
	c.cancel()
	<-c.done
}

func (s *Store) checkpointWhenIdle(ctx context.Context) {
	c := s.ckpt
	defer close(c.done)
	tick := time.NewTicker(c.idle)
	defer tick.Stop()
	var seen, folded int64 // writes at the last look, and at the last checkpoint
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n := c.writes.Load()
		if n != seen { // written to during the last period: not quiet yet
			seen = n
			continue
		}
		if n != folded {
			// A failed checkpoint (logged) is tried again after the next
			// write, not every period.
			s.checkpointNow(ctx)
			folded = n
		}
	}
}

// checkpointNow folds the whole WAL into the database file, so that the
// next write starts it again from the beginning.
func (s *Store) checkpointNow(ctx context.Context) {
	if s.takeTurn(ctx) != nil {
		return // ended, or the store closed
	}
	defer func() { <-s.wsem }()
	if s.listDirty > 0 {
		if err := s.flushLists(context.WithoutCancel(ctx)); err != nil {
			s.log.WarnContext(ctx, "bringing run lists up to date failed", "error", err)
		}
	}
	var busy, walPages, folded int
	// Not cut short by Close: a checkpoint that has begun completes.
	err := s.wconn.QueryRowContext(context.WithoutCancel(ctx), "PRAGMA wal_checkpoint(RESTART)").
		Scan(&busy, &walPages, &folded)
	if err != nil || busy != 0 {
		s.log.WarnContext(ctx, "idle checkpoint did not complete", "busy", busy, "error", err)
		return
	}
	select {
	case s.ckpt.folded <- struct{}{}:
	default:
	}
}
