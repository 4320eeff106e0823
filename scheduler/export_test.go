package scheduler

import (
	"context"
	"time"
)

// NextWait exposes the loop's sleep after a poll that did not fill a
// batch, for tests.
func NextWait(s *Scheduler, ctx context.Context) time.Duration {
	return s.nextWait(ctx, s.cfg.Clock())
}

// RecoverInterval exposes the resolved Config.RecoverInterval, for tests.
func RecoverInterval(s *Scheduler) time.Duration { return s.cfg.RecoverInterval }
