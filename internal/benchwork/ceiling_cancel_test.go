package benchwork

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCeilingStopsOnCancel: MeasureCeiling takes a context, and the
// bench command passes it the context main cancels on SIGINT/SIGTERM
// (cmd/abstractgateway/main.go signal.NotifyContext → benchParent →
// measureCeilings). The SQLite ceilings stop when it ends, but
// fsync_append, fdatasync_append, file_create and page_first_touch ignore
// it: each runs its full duration and then reports a rate as if nothing
// happened, so measureCeilings goes on to the next one. A Ctrl-C during
// the ceilings of `bench --ceiling-seconds 2` was seen to keep measuring
// (and printing) three more ceilings for ~7.7 s before exiting, and
// main's NotifyContext swallows a second Ctrl-C. A context that ends
// during a ceiling must end it with the context's error, not a number.
func TestCeilingStopsOnCancel(t *testing.T) {
	for _, name := range Ceilings {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		start := time.Now()
		ops, err := MeasureCeiling(ctx, name, t.TempDir(), 500*time.Millisecond)
		cancel()
		if err == nil {
			t.Errorf("ceiling %s, its context ended after 20ms: %.0f ops/s after %v, want the context's error",
				name, ops, time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestFdatasyncInplaceCeiling: the bench README's six ceilings include
// fdatasync_inplace (pwrite of one record at offset 0 + fdatasync), the
// cost of a FULL commit of the SQLite store (a redo-log record written
// into existing blocks and fdatasynced: store/sqlite/redo.go), which
// sqlite_full lines compare with in go_vs_fdatasync_inplace.
func TestFdatasyncInplaceCeiling(t *testing.T) {
	if !slices.Contains(Ceilings, CeilingFdatasyncInplace) {
		t.Errorf("Ceilings = %v: %s is not measured", Ceilings, CeilingFdatasyncInplace)
	}
	ops, err := MeasureCeiling(context.Background(), CeilingFdatasyncInplace, t.TempDir(), 50*time.Millisecond)
	if err != nil || ops <= 0 {
		t.Fatalf("MeasureCeiling(%s) = %v, %v; want a positive rate", CeilingFdatasyncInplace, ops, err)
	}
}

// TestCeilingPayloadIs200Bytes: every ceiling writes 200 bytes an
// operation (the ceiling constants' docs and docs/benchmarks.md); a
// payload of another size would change what fsync_append and
// fdatasync_inplace cost, and with them go_vs_fdatasync_inplace.
func TestCeilingPayloadIs200Bytes(t *testing.T) {
	if len(ceilingPayload) != 200 || ceilingPayload[199] != '\n' || strings.Count(string(ceilingPayload), "x") != 199 {
		t.Fatalf("ceiling payload %d bytes %q, want 199 × \"x\" and a newline", len(ceilingPayload), ceilingPayload)
	}
}
