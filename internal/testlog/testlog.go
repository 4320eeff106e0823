// Package testlog is an slog handler for tests that check what a
// component logs: it keeps each record as one line of text.
package testlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Recorder keeps the records it handles, at every level, as lines
// "message key=value …". Safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger writing to r.
func (r *Recorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled implements slog.Handler: every level is kept.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler; the attributes are not kept (the
// components under test log theirs per record).
func (r *Recorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup implements slog.Handler, without groups.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Take returns the lines kept since the last Take and forgets them.
func (r *Recorder) Take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}
