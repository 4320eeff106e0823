package main

import (
	"context"
	"strings"
	"testing"
)

// bundle run's help: "When the command exits leaving a run waiting, or is
// interrupted (Ctrl-C, SIGTERM), it prints the command that continues it."
// The line printed when the run starts names it too, but it has scrolled
// away behind the ledger lines by the time the user presses Ctrl-C: the
// command must be printed again after "interrupted". Found by mutating
// the interrupted path to print nothing, which
// TestBundleRunInterruptedPrintsHowToContinue let pass (it matched the
// start line).
func TestBundleRunInterruptedPrintsTheContinueCommandLast(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "parent.json", map[string]string{
		"parent.json": napParentFlow,
		"nap.json":    strings.Replace(napChildFlow, `"duration":0.2`, `"duration":1`, 1),
	})
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuf
	done := make(chan int)
	go func() {
		done <- bundleRunWith(ctx, []string{path, "--data-dir", data}, strings.NewReader(""), &stdout, &stderr)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "waiting until") })
	cancel()
	if code := <-done; code != 1 {
		t.Fatalf("interrupted: exit %d, want 1\n%s", code, stderr.String())
	}
	errOut := stderr.String()
	i := strings.LastIndex(errOut, "bundle run: interrupted")
	if i < 0 {
		t.Fatalf("no \"interrupted\" message:\n%s", errOut)
	}
	after := errOut[i:]
	if !strings.Contains(after, "abstractgateway bundle run "+path+" --data-dir "+data+" --run-id ") {
		t.Fatalf("after \"interrupted\" the command that continues the run is not printed:\n%s", after)
	}
}

// bundle validate's help: "Exit code: ... 2 usage". Without a bundle or
// directory to validate, the command has validated nothing: a CI step
// whose glob expanded to nothing must not pass. Found by mutating that
// case to exit 0, which no test caught.
func TestValidateWithoutArgumentsIsAUsageError(t *testing.T) {
	t.Parallel()
	code, out, errOut := call(t, "validate")
	if code != 2 {
		t.Fatalf("bundle validate with no argument: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "usage: abstractgateway bundle validate") {
		t.Errorf("no usage on stderr:\n%s", errOut)
	}
}
