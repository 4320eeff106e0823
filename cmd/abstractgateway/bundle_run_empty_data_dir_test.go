package main

import (
	"strings"
	"testing"
)

// `bundle run FILE --data-dir "$DATA"` with DATA unset passes an explicit
// empty --data-dir. The command takes it for "no --data-dir" and runs in a
// temporary directory it removes on exit: the run the user asked to keep
// is gone, and a completed run says nothing about it. The example command
// refuses the same empty flag ("--data-dir is empty"), and bundle run
// itself refuses an empty --run-id; an empty --data-dir given on the
// command line must be a usage error (exit 2) naming the flag.
func TestBundleRunRefusesAnExplicitEmptyDataDir(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", "", "--answer", "ok")
	if code != 2 || !strings.Contains(errOut, "--data-dir") {
		t.Fatalf("--data-dir \"\": exit %d, want 2 and a message naming --data-dir\n%s%s", code, out, errOut)
	}
}
