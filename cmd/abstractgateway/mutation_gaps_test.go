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
	"slices"
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

// TestBenchCeilingLinesAndGoVsCeiling: the ceilings follow the bench
// README's protocol (--ceiling-samples samples of each before the
// workloads and as many after); each ceiling line lists them in that
// order, the median of each phase (before_ops_per_s, after_ops_per_s) and
// as ops_per_s the median of all of them, which the ratios divide by.
// Commits are compared with the ceiling of the store's own synchronous
// setting and locking mode (exclusive): sqlite lines with
// sqlite_wal_normal_exclusive, sqlite_full lines with
// sqlite_wal_full_exclusive and also, as go_vs_fdatasync_inplace, with
// fdatasync_inplace (what a redo-log FULL commit costs). Memory lines
// carry no ratio.
func TestBenchCeilingLinesAndGoVsCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the ceilings")
	}
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory,sqlite,sqlite_full", "--workloads", "w1_chain", "--runs", "5", "--repeats", "1",
		"--isolate=false", "--ceiling-seconds", "0.01", "--ceiling-samples", "2", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	ceilings, lines := benchLines(t, stdout.String())
	if len(ceilings) != len(benchwork.Ceilings) || len(lines) != 3 {
		t.Fatalf("%d ceiling lines, %d workload lines:\n%s", len(ceilings), len(lines), stdout.String())
	}
	for name, c := range ceilings {
		var s []float64
		for _, x := range c["samples"].([]any) {
			s = append(s, x.(float64))
		}
		if len(s) != 4 || c["samples_per_phase"] != 2.0 {
			t.Errorf("%s: samples %v per phase %v, want 2 before and 2 after", name, s, c["samples_per_phase"])
			continue
		}
		mid := func(a, b float64) float64 { return math.Round((a+b)/2*10) / 10 }
		all := slices.Sorted(slices.Values(s))
		for field, want := range map[string]float64{
			"before_ops_per_s": mid(s[0], s[1]), "after_ops_per_s": mid(s[2], s[3]), "ops_per_s": mid(all[1], all[2]),
		} {
			if got := c[field].(float64); math.Abs(got-want) > 0.051 {
				t.Errorf("%s: %s %v, want %v (samples %v)", name, field, got, want, s)
			}
		}
	}
	mem := lines["w1_chain/memory"]
	for _, f := range []string{"go_vs_ceiling", "go_vs_ceiling_of", "go_vs_fdatasync_inplace", "commits_per_s"} {
		if _, ok := mem[f]; ok {
			t.Errorf("memory line carries %s: %v", f, mem)
		}
	}
	ratio := func(l map[string]any, field, ceiling string) {
		t.Helper()
		cps, _ := l["commits_per_s"].(float64)
		got, _ := l[field].(float64)
		wantCPS := math.Round(l["commits_per_run"].(float64)*l["runs_per_s"].(float64)*10) / 10
		ceil := ceilings[ceiling]["ops_per_s"].(float64)
		if want := math.Round(cps/ceil*1000) / 1000; cps != wantCPS || got != want {
			t.Errorf("%s/%s: commits_per_s %v %s %v; want %v and %v (÷ %s %v)", l["workload"], l["store"],
				cps, field, got, wantCPS, want, ceiling, ceil)
		}
	}
	normal, full := lines["w1_chain/sqlite"], lines["w1_chain/sqlite_full"]
	ratio(normal, "go_vs_ceiling", benchwork.CeilingSQLiteNormalExclusive)
	ratio(full, "go_vs_ceiling", benchwork.CeilingSQLiteFullExclusive)
	ratio(full, "go_vs_fdatasync_inplace", benchwork.CeilingFdatasyncInplace)
	if normal["go_vs_ceiling_of"] != benchwork.CeilingSQLiteNormalExclusive || full["go_vs_ceiling_of"] != benchwork.CeilingSQLiteFullExclusive {
		t.Errorf("go_vs_ceiling_of: sqlite %v, sqlite_full %v", normal["go_vs_ceiling_of"], full["go_vs_ceiling_of"])
	}
	if _, ok := normal["go_vs_fdatasync_inplace"]; ok {
		t.Errorf("sqlite (NORMAL) line carries go_vs_fdatasync_inplace: %v", normal)
	}
}

// TestBenchCeilingDefaults: by default each ceiling is sampled as the
// bench README's table was, 3 × 3 s before the workloads and as many
// after.
func TestBenchCeilingDefaults(t *testing.T) {
	cfg, code := parseBenchFlags(nil, io.Discard, io.Discard)
	if code != -1 || cfg.ceilingSeconds != 3 || cfg.ceilingSamples != 3 {
		t.Fatalf("defaults: code %d, --ceiling-seconds %v, --ceiling-samples %v; want 3 and 3", code, cfg.ceilingSeconds, cfg.ceilingSamples)
	}
	if _, code := parseBenchFlags([]string{"--ceiling-samples", "0"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("--ceiling-samples 0: code %d, want a usage error (2)", code)
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
