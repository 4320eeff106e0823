//go:build unix

package benchwork

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// platformCeilings are the ceilings only unix measures.
var platformCeilings = []string{CeilingPageTouch}

// pageTouchChunk is the anonymous mapping touched per round: small, so
// that the ceiling does not raise the process's peak RSS, which a child
// process inherits through exec (Linux keeps ru_maxrss across execve) and
// would then report as its own.
const pageTouchChunk = 1 << 20

// pageTouchCeiling maps fresh anonymous memory, writes one byte in each
// 4 KB page (a minor fault each) and unmaps it, round after round.
func pageTouchCeiling(ctx context.Context, d time.Duration) (int, time.Duration, error) {
	const page = 4096
	n := 0
	start := time.Now()
	deadline := start.Add(d)
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		b, err := syscall.Mmap(-1, 0, pageTouchChunk, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0, 0, fmt.Errorf("mmap: %w", err)
		}
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		n += len(b) / page
		if err := syscall.Munmap(b); err != nil {
			return 0, 0, fmt.Errorf("munmap: %w", err)
		}
		if now := time.Now(); !now.Before(deadline) {
			return n, now.Sub(start), nil
		}
	}
}
