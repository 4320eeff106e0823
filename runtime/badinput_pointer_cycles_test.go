package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
)

// Start refuses vars holding a cycle with an error naming the key path. A
// pointer that points, through an interface, back at itself (var x any;
// x = &x) is a cycle with no map or slice in it: the encoder followed the
// pointer without its cycle check or a level of its nesting limit, so it
// recursed until the stack overflow killed the process (a fatal error,
// not a recoverable panic). The same encoder checks handler results,
// resume and event payloads and store commits. The test runs in a child
// process (runInChildProcess) so such a crash fails only this test.
func TestSelfPointerVarsRefusedNamingPath(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	ctx := context.Background()
	f := setup(t, askWorkflow())
	var x any
	x = &x
	_, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", Vars: map[string]any{"a": x}})
	if err == nil {
		t.Fatal("vars holding a pointer to itself were accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "vars.a") || !strings.Contains(msg, "cycle") || len(msg) > 500 {
		t.Errorf("error %.300q; want a refusal naming the cycle at vars.a", msg)
	}
}

// An array that holds a pointer to itself (var a [1]any; a[0] = &a) is
// copied at every level, so only the pointer repeats: the encoder walked
// it 10,000 levels down and refused it as "nesting too deep" with a 30 KB
// path (vars.a[0][0][0]…) instead of a cycle.
func TestCyclicArrayPointerIsReportedAsCycle(t *testing.T) {
	ctx := context.Background()
	f := setup(t, askWorkflow())
	var a [1]any
	a[0] = &a
	_, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", Vars: map[string]any{"a": a}})
	if err == nil {
		t.Fatal("a cyclic value was accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "cycle") || !strings.Contains(msg, "vars.a[0]") || len(msg) > 500 {
		t.Errorf("error (%d bytes) ends %q; want it to name the cycle at vars.a[0]", len(msg), msg[max(0, len(msg)-60):])
	}
}
