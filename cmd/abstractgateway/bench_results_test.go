package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/benchwork"
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
