package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// runExampleCommand runs the example command in-process and returns its exit
// code, stdout and stderr.
func runExampleCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"example"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// exampleRuntimeIn opens the example's SQLite store in the data dir data,
// as the example command does, with a runtime serving the example
// workflow; the caller closes the store before running the command.
func exampleRuntimeIn(t *testing.T, ctx context.Context, data string) (*runtime.Runtime, store.Store) {
	t.Helper()
	st, err := openStoreKind(ctx, data, storeSQLite)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := runtime.NewRegistry(exampleWorkflow())
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

// The example used to end a run that fails (here: the continued run sits at a
// node the example workflow does not have, as a data dir written by
// another version of the example would hold; the kernel fails it with
// `unknown node "…"`, docs/compatibility.md "unknown current_node") by
// printing "run <id> failed: {}" and exiting 0. Every other command
// exits non-zero when its run does not complete (bundle run: exit 1 for
// a failed or cancelled run, bundle_run.go), and a script or CI step
// running `abstractgateway example --answer yes` must not take a failed
// run for success: it exits 1, as bundle run.
func TestExampleFailedRunExitsNonZero(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	rt, st := exampleRuntimeIn(t, ctx, data)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "example_order"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r.CurrentNode = "ship" // a node of another version of the example
	if err := st.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runExampleCommand(t, "--data-dir", data, "--answer", "yes")
	if !strings.Contains(out, "run "+id+" "+string(durable.RunFailed)) {
		t.Fatalf("setup: the continued run did not fail:\nexit %d\n%s%s", code, out, errOut)
	}
	if code == 0 {
		t.Errorf("example exited 0 for a run that failed (want non-zero, as bundle run does)\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
