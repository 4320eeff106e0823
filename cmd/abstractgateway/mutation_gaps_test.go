package main

// Tests added by mutation testing of the command: each guards a promise
// of the usage texts, doc comments or the bench README
// (/work/shared/bench/README.md) that no other test checked.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/benchwork"
	"github.com/abstractframework/abstractgateway/runtime"
)

// flakyBenchChildEnv names a counter file: with it set, this test binary
// acts as the bench child (as benchChildEnv does) but fails, printing
// nothing, on the second child it is run as.
const flakyBenchChildEnv = "AGW_TEST_BENCH_FLAKY_CHILD"

func init() {
	counter := os.Getenv(flakyBenchChildEnv)
	if counter == "" || len(os.Args) < 2 || os.Args[1] != "bench" {
		return
	}
	b, _ := os.ReadFile(counter)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	if err := os.WriteFile(counter, []byte(strconv.Itoa(n)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if n == 2 {
		fmt.Fprintln(os.Stderr, "flaky bench child: failing on purpose")
		os.Exit(1)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// benchLines splits the bench command's stdout into ceiling lines (by
// name) and workload lines (by workload/store).
func benchLines(t *testing.T, stdout string) (ceilings, workloads map[string]map[string]any) {
	t.Helper()
	ceilings, workloads = map[string]map[string]any{}, map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if c, ok := m["ceiling"].(string); ok {
			ceilings[c] = m
		} else {
			workloads[fmt.Sprint(m["workload"], "/", m["store"])] = m
		}
	}
	return ceilings, workloads
}

// TestBenchRefusesBadRepeatsAndChildFlags: --repeats must be positive (0
// would print no workload line and exit 0), and the internal --child
// needs one store and --dir; all are usage errors (exit 2) that print
// nothing on stdout.
func TestBenchRefusesBadRepeatsAndChildFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--repeats", "0", "--ceiling-seconds", "0"},
		{"--repeats", "-1", "--ceiling-seconds", "0"},
		{"--ceiling-seconds", "-1"},
		{"--child", "--stores", "memory"},
		{"--child", "--stores", "memory,json", "--dir", t.TempDir()},
		{"--stores", " , "},
	} {
		var stdout, stderr bytes.Buffer
		if code := runBench(context.Background(), args, &stdout, &stderr); code != 2 || stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 with a message on stderr", args, code, stdout.String(), stderr.String())
		}
	}
}

// TestBenchDropsRepeatedStoresAndWorkloads: the lists drop blanks and
// repeats (splitList), so "--stores memory,memory" measures memory once
// rather than doubling its samples.
func TestBenchDropsRepeatedStoresAndWorkloads(t *testing.T) {
	cfg, code := parseBenchFlags([]string{"--stores", "memory, memory,,json", "--workloads", "w1_chain,w1_chain, w4_ledger_read"},
		io.Discard, io.Discard)
	if code != -1 {
		t.Fatalf("parse code %d", code)
	}
	if want := []string{"memory", "json"}; !reflect.DeepEqual(cfg.stores, want) {
		t.Errorf("stores %q, want %q", cfg.stores, want)
	}
	if want := []string{"w1_chain", "w4_ledger_read"}; !reflect.DeepEqual(cfg.workloads, want) {
		t.Errorf("workloads %q, want %q", cfg.workloads, want)
	}
}

// TestBenchFailedWorkloadExitsNonZeroWithoutANumber: the README: "A
// workload whose checks fail exits non-zero; it never prints a number."
// The postgres kind without its database URL fails; the memory store
// beside it is still reported, and the command exits 1 naming the pair.
func TestBenchFailedWorkloadExitsNonZeroWithoutANumber(t *testing.T) {
	t.Setenv(benchwork.PostgresURLEnv, "")
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory,postgres", "--workloads", "w3_wait_until_past", "--runs", "3", "--repeats", "1",
		"--isolate=false", "--ceiling-seconds", "0", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	_, lines := benchLines(t, stdout.String())
	if _, ok := lines["w3_wait_until_past/postgres"]; ok {
		t.Errorf("the failed pair printed a line:\n%s", stdout.String())
	}
	if _, ok := lines["w3_wait_until_past/memory"]; !ok {
		t.Errorf("the memory pair, which passed, printed no line:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "w3_wait_until_past/postgres") {
		t.Errorf("stderr does not name the failed pair:\n%s", stderr.String())
	}
}

// TestBenchChildExitsNonZeroOnAFailedWorkload: the child process that
// measures one (store, workload group) exits 1, printing no sample, when
// its workload fails; the parent relies on that exit code.
func TestBenchChildExitsNonZeroOnAFailedWorkload(t *testing.T) {
	t.Setenv(benchwork.PostgresURLEnv, "")
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--child", "--stores", "postgres", "--workloads", "w3_wait_until_past", "--runs", "3", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 1 || stdout.Len() != 0 {
		t.Fatalf("failed child: exit %d, stdout %q; want 1 and nothing\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// TestBenchWorkloadFailingInOneRepeatPrintsNoNumber: a (workload, store)
// whose checks fail in any repeat is not reported, even if the other
// repeats passed (a median of the passing ones would be a number for a
// failed workload), and the command exits 1.
func TestBenchWorkloadFailingInOneRepeatPrintsNoNumber(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three child processes")
	}
	t.Setenv(flakyBenchChildEnv, t.TempDir()+"/children")
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory", "--workloads", "w3_wait_until_past", "--runs", "3", "--repeats", "3",
		"--ceiling-seconds", "0", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if !strings.Contains(stderr.String(), "failing on purpose") {
		t.Fatalf("the second child did not fail:\n%s", stderr.String())
	}
	if code != 1 || strings.Contains(stdout.String(), `"workload"`) {
		t.Fatalf("one of 3 repeats failed: exit %d, stdout:\n%s\nwant exit 1 and no workload line\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// TestBenchCeilingLinesAndGoVsCeiling: each ceiling line's ops_per_s is
// the mean of its before/after samples; only the sqlite_full lines carry
// commits_per_s (commits_per_run × runs_per_s) and go_vs_ceiling, the
// ratio to the sqlite_wal_full_exclusive ceiling (the store's own
// locking mode).
func TestBenchCeilingLinesAndGoVsCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the ceilings")
	}
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory,sqlite_full", "--workloads", "w1_chain", "--runs", "5", "--repeats", "1",
		"--isolate=false", "--ceiling-seconds", "0.05", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	ceilings, lines := benchLines(t, stdout.String())
	if len(ceilings) != len(benchwork.Ceilings) || len(lines) != 2 {
		t.Fatalf("%d ceiling lines, %d workload lines:\n%s", len(ceilings), len(lines), stdout.String())
	}
	for name, c := range ceilings {
		s, _ := c["samples"].([]any)
		if len(s) != 2 {
			t.Errorf("%s: samples %v, want before and after", name, c["samples"])
			continue
		}
		mean := (s[0].(float64) + s[1].(float64)) / 2
		if got := c["ops_per_s"].(float64); math.Abs(got-mean) > 0.051 {
			t.Errorf("%s: ops_per_s %v, want the mean of %v = %.2f", name, got, s, mean)
		}
	}
	mem := lines["w1_chain/memory"]
	if _, ok := mem["go_vs_ceiling"]; ok {
		t.Errorf("memory line carries go_vs_ceiling: %v", mem)
	}
	if _, ok := mem["commits_per_s"]; ok {
		t.Errorf("memory line carries commits_per_s: %v", mem)
	}
	full := lines["w1_chain/sqlite_full"]
	cps, _ := full["commits_per_s"].(float64)
	ratio, _ := full["go_vs_ceiling"].(float64)
	wantCPS := math.Round(full["commits_per_run"].(float64)*full["runs_per_s"].(float64)*10) / 10
	ceil := ceilings[benchwork.CeilingSQLiteFullExclusive]["ops_per_s"].(float64)
	wantRatio := math.Round(cps/ceil*1000) / 1000
	if cps != wantCPS || ratio != wantRatio {
		t.Errorf("sqlite_full: commits_per_s %v go_vs_ceiling %v; want %v and %v (÷ %s %v; %s is %v)", cps, ratio,
			wantCPS, wantRatio, benchwork.CeilingSQLiteFullExclusive, ceil,
			benchwork.CeilingSQLiteFull, ceilings[benchwork.CeilingSQLiteFull]["ops_per_s"])
	}
}

// TestNoCommandIsAUsageError: abstractgateway without a command prints
// the usage on stderr and exits 2.
func TestNoCommandIsAUsageError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), nil, &stdout, &stderr); code != 2 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), "usage: abstractgateway <command>") {
		t.Fatalf("no command: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// shortWriter accepts one byte less than it is given, without an error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return max(len(p)-1, 0), nil }

// TestOutWriterReportsShortWrites: a write that reaches its destination
// only in part, even without an error, fails the command (outWriter's
// doc: a truncated output must not end in exit 0).
func TestOutWriterReportsShortWrites(t *testing.T) {
	out := &outWriter{w: shortWriter{}}
	if _, err := fmt.Fprintln(out, "hello"); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("short write: err = %v, want io.ErrShortWrite", err)
	}
	var stderr bytes.Buffer
	if code := out.exit("cmd", &stderr, 0); code != 1 || !strings.Contains(stderr.String(), "cmd: writing the output") {
		t.Errorf("exit after a short write: %d, stderr %q", code, stderr.String())
	}
}

// TestTemporaryDataDirIsRemovedOnClose: without --data-dir the store
// lives in a temporary directory that close removes (openDataStore's
// doc; bundle run's usage: "removed at the end").
func TestTemporaryDataDirIsRemovedOnClose(t *testing.T) {
	ds, err := openDataStore(context.Background(), "", storeAuto)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.temp {
		t.Fatalf("data store in %s not marked temporary", ds.dir)
	}
	if _, err := os.Stat(ds.dir); err != nil {
		t.Fatal(err)
	}
	if err := ds.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ds.dir); !errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(ds.dir)
		t.Fatalf("temporary data dir %s left after close (stat: %v)", ds.dir, err)
	}
}

// TestDetectStoreRecognisesEachJSONFileOfThePythonLayout: --store auto
// takes a data dir holding any file of the Python gateway's JSON-file
// layout (run_*.json, ledger_*.jsonl, commands.jsonl, commands_cursor.json,
// gateway_runner.lock) for the JSON-file
// store (storeHelp); other files, an empty or a missing dir give SQLite.
func TestDetectStoreRecognisesEachJSONFileOfThePythonLayout(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  storeKind
	}{
		{[]string{"commands.jsonl"}, storeJSON},
		{[]string{"run_0a1b.json"}, storeJSON},
		{[]string{"ledger_0a1b.jsonl"}, storeJSON},
		{[]string{"commands_cursor.json"}, storeJSON},
		{[]string{"gateway_runner.lock"}, storeJSON},
		{[]string{"notes.json", "run_0a1b.jsonl", "ledger_0a1b.json"}, storeSQLite},
		{nil, storeSQLite},
		{[]string{sqliteFile, "run_0a1b.json"}, storeSQLite},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := detectStore(dir); err != nil || got != tc.want {
			t.Errorf("data dir with %q: %q, %v; want %q", tc.files, got, err, tc.want)
		}
	}
	if got, err := detectStore(filepath.Join(t.TempDir(), "new")); err != nil || got != storeSQLite {
		t.Errorf("missing data dir: %q, %v; want sqlite", got, err)
	}
}

// TestExampleContinuesTheWaitingRunBeforeARunningOne: example continues
// "the run it left waiting" (its usage); a data dir that also holds a
// running example run must not make it switch to that one.
func TestExampleContinuesTheWaitingRunBeforeARunningOne(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	rt, st := exampleRuntimeIn(t, ctx, data)
	waiting, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "example_order"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := rt.Tick(ctx, waiting, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatalf("setup: run %s after a tick: %v, %v", waiting, s, err)
	}
	running, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "example_order"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := rt.GetState(ctx, running); err != nil || s.Status != durable.RunRunning {
		t.Fatalf("setup: run %s after start: %v, %v", running, s, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"example", "--data-dir", data, "--answer", "yes"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "continuing run "+waiting+" (waiting)") || strings.Contains(out, running) ||
		!strings.Contains(out, "run "+waiting+" completed") {
		t.Fatalf("want the waiting run %s continued and completed, not the running %s:\n%s", waiting, running, out)
	}
}

// TestBundleRunContinueCommandKeepsStoreAndInput: the command bundle run
// prints for a run it leaves waiting continues that run as is: it
// repeats --store (when not auto) and --input (a run created with
// --input needs the same --input to be continued).
func TestBundleRunContinueCommandKeepsStoreAndInput(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	data := t.TempDir()
	input := `{"name": "bob"}`
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--store", "json", "--input", input)
	if code != exitWaiting {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitWaiting, out, errOut)
	}
	id, _ := cliResult(t, out)["run_id"].(string)
	want := shellCommand("abstractgateway", "bundle", "run", path, "--data-dir", data, "--store", "json", "--input", input, "--run-id", id)
	if !strings.Contains(errOut, want) {
		t.Fatalf("continue command missing, want %q in:\n%s", want, errOut)
	}
	code, out, errOut = cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--store", "json", "--input", input,
		"--run-id", id, "--answer", "happy")
	res := cliResult(t, out)
	if code != 0 || res["run_id"] != id || res["output"].(map[string]any)["loud"] != "BOB" {
		t.Fatalf("the printed command did not continue run %s: exit %d\n%s%s", id, code, out, errOut)
	}
}
