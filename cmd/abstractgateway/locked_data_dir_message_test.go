package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A user runs `abstractgateway example` (or `bundle run --data-dir`) while
// another instance has the same SQLite data dir open (e.g. waiting at
// "Ship the order?"). The command fails, as it must, and says the data
// dir is in use and what to do (stop the other instance or use another
// --data-dir). It ended with a hint meant for Go library callers ("unless
// Config.Shared is set"), a field no flag of this program sets.
func TestLockedSQLiteDataDirMessageIsForCLIUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	// The other instance: the example's store open on the data dir.
	_, st := exampleRuntimeIn(t, ctx, data)
	defer st.Close()

	start := time.Now()
	code, out, errOut := runExampleCommand(t, "--data-dir", data, "--answer", "yes")
	t.Logf("exit %d after %v\nstdout: %s\nstderr: %s", code, time.Since(start).Round(time.Millisecond), out, errOut)
	if code != 1 {
		t.Fatalf("example on a data dir another instance holds: exit %d, want 1", code)
	}
	if strings.Contains(errOut, "Config.Shared") {
		t.Errorf("the error tells a CLI user to set Config.Shared, a Go API field no flag of abstractgateway sets:\n%s", errOut)
	}
	if !strings.Contains(errOut, "in use") && !strings.Contains(errOut, "--data-dir") {
		t.Errorf("the error does not say that the data dir is in use by another instance (or suggest another --data-dir):\n%s", errOut)
	}
}
