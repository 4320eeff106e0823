package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// benchChildEnv makes this test binary act as the abstractgateway
// executable when the bench command re-executes itself (os.Executable is
// the test binary here) with "bench --child ...".
const benchChildEnv = "AGW_TEST_BENCH_CHILD"

func init() {
	if os.Getenv(benchChildEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "bench" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
}

// The bench README: "One process per (store, workload, repeat): a fresh
// interpreter, so peak_rss_mb (getrusage ru_maxrss) belongs to that
// workload", and Sample.Isolated promises "peak_rss_mb is that
// workload's". On Linux, execve keeps the caller's ru_maxrss
// (signal->maxrss is raised to the old mm's high-water mark; Go's
// os/exec uses a vfork-style clone, so the old mm is the parent's), so
// the child reads the bench PARENT's peak whenever it is larger than its
// own. ceiling_unix.go knows this and keeps page_first_touch small, but
// the parent's other in-process work (the SQLite ceilings, measured
// before the workloads by default) still raises its peak: on this VM
// `bench --runs 50 --repeats 1 --stores memory --workloads w2_ask_resume`
// prints peak_rss_mb 14.3 with --ceiling-seconds 0 and 27.3 with
// --ceiling-seconds 0.2, and every line of a default run shows the same
// value (the parent's). Here the parent's peak is raised on purpose, far
// above what a 5-run memory workload needs, and the isolated child must
// not report it.
func TestIsolatedPeakRSSIsNotTheParents(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("Linux only (ru_maxrss across execve)")
	}
	t.Setenv(benchChildEnv, "1")

	// Raise this (parent) process's peak RSS to well above 200 MiB.
	const ballast = 256 << 20
	b := make([]byte, ballast)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	b = nil
	debug.FreeOSMemory() // the parent's RSS goes back down; its peak stays

	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory", "--workloads", "w3_wait_until_past", "--runs", "5", "--repeats", "1",
		"--ceiling-seconds", "0", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	var line struct {
		Workload  string  `json:"workload"`
		PeakRSSMB float64 `json:"peak_rss_mb"`
		Isolated  bool    `json:"isolated"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &line); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if !line.Isolated {
		t.Fatalf("sample not isolated: %s", stdout.String())
	}
	if line.PeakRSSMB >= 200 {
		t.Fatalf("isolated %s (5 runs, memory store) reports peak_rss_mb %.1f: that is the bench parent's peak (>= %d MiB), inherited through execve, not the workload's",
			line.Workload, line.PeakRSSMB, ballast>>20)
	}
}

// A data dir whose example run is stored as waiting with no wait state
// (a hand-edited or damaged run file; the JSON-file and SQLite stores
// accept it) makes `example` panic with a nil pointer dereference in
// exampleRun (st.Waiting.Reason) instead of reporting the damaged run
// and exiting 1. The brief: a corrupt ./data must give a clear error,
// never a panic.
func TestExampleOnAWaitingRunWithoutWaitStateDoesNotPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, st := exampleRuntime(t, ctx)
	// Stop at the question.
	if err := exampleRun(ctx, rt, "", strings.NewReader(""), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	rows, err := st.RunIndex(ctx, &store.RunIndexParams{Status: durable.RunWaiting, WorkflowID: "example_order", Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("waiting run: %v %v", rows, err)
	}
	run, err := st.RunGet(ctx, rows[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	run.Waiting = nil // damaged: status waiting, no wait
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}

	runCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		_ = exampleRun(runCtx, rt, "", strings.NewReader(""), &bytes.Buffer{})
	}()
	if panicked != nil {
		t.Fatalf("example on a run stored as waiting without a wait state panicked: %v (want an error naming the run)", panicked)
	}
}

// `bundle pack` reads its root flow (and subflows) with no size limit and
// says "packed ... -> out.flow" (exit 0) for a bundle that every command
// reading bundles then refuses: bundle.Read caps an entry at 64 MiB, and
// pack copies a flow's description into the manifest as well. Its usage
// says it "compiles it to check it, and writes it": the check misses the
// one limit the readers enforce, so a CI step `pack && validate` learns
// only at the second step, from a file pack said was fine. Pack should
// refuse (or at least fail) what its own readers cannot open.
func TestPackDoesNotWriteABundleTheReadersRefuse(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "shout.json")
	big := `{"description":"` + strings.Repeat("x", 65<<20) + `",` + shoutFlow[1:]
	if err := os.WriteFile(src, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	big = ""
	out := filepath.Join(dir, "big.flow")
	code, stdout, stderr := call(t, "pack", "-o", out, src)
	if code != 0 {
		return // refused: fine
	}
	if _, err := bundle.Read(out); err != nil {
		t.Fatalf("bundle pack exited 0 (%s) but the bundle it wrote cannot be read: %v%s", strings.TrimSpace(stdout), err, stderr)
	}
}
