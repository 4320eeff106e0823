package scheduler

import (
	"context"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// drivePool runs the drives of one poll (or one Recover) on up to
// Config.Concurrency goroutines, so that a run whose tick takes long (a
// slow model call, a retry's back-off) does not hold up the others.
// Runs are independent: each tick holds its own run's lock, and the
// runtime queues what one run's tick does to another (a parent's resume)
// until that lock is released.
type drivePool struct {
	slots chan struct{}
	wg    sync.WaitGroup

	mu       sync.Mutex
	started  int
	ticked   int
	unserved []unservedRun
}

// unservedRun is a due run whose tick found its workflow missing.
type unservedRun struct {
	due      store.DueRun
	workflow string
}

// newDrivePool returns a pool, or nil when drives run one at a time on the
// caller's goroutine (Concurrency 1, the default).
func (s *Scheduler) newDrivePool() *drivePool {
	if s.cfg.Concurrency <= 1 {
		return nil
	}
	return &drivePool{slots: make(chan struct{}, s.cfg.Concurrency)}
}

// launched is how many drives the pool has started: they count against a
// poll's budget before they end.
func (p *drivePool) launched() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// goDrive starts fn once a goroutine is free; false when ctx ended first.
func (p *drivePool) goDrive(ctx context.Context, fn func()) bool {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer func() {
			<-p.slots
			p.wg.Done()
		}()
		fn()
	}()
	return true
}

// driveDue starts the drive of a due run (driveServed), recording whether
// its workflow was served.
func (p *drivePool) driveDue(ctx context.Context, s *Scheduler, d store.DueRun) bool {
	return p.goDrive(ctx, func() {
		wf, ok := s.driveServed(ctx, d.RunID, d.Until)
		p.mu.Lock()
		defer p.mu.Unlock()
		if ok {
			p.ticked++
		} else {
			p.unserved = append(p.unserved, unservedRun{due: d, workflow: wf})
		}
	})
}

// drive starts a plain drive (Recover's).
func (p *drivePool) drive(ctx context.Context, s *Scheduler, runID string) bool {
	return p.goDrive(ctx, func() { s.drive(ctx, runID, durable.Time{}) })
}

// wait waits for every drive started and returns how many due runs were
// ticked and which were found unserved.
func (p *drivePool) wait() (ticked int, unserved []unservedRun) {
	if p == nil {
		return 0, nil
	}
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ticked, p.unserved
}
