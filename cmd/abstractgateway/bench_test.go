package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/benchwork"
)

// TestBench_InProcess runs the bench command on the memory store without
// child processes and checks the JSON lines: the ceilings first, then one
// line per workload with the required fields first.
func TestBench_InProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs W3b's 250 ms waits")
	}
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory", "--runs", "5", "--repeats", "2", "--isolate=false",
		"--ceiling-seconds", "0.02", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	nc := len(benchwork.Ceilings)
	if want := nc + 5; len(lines) != want { // the ceilings + 5 workloads
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, stdout.String())
	}
	for _, l := range lines[:nc] {
		if !strings.HasPrefix(l, `{"ceiling":"`) || !strings.Contains(l, `"ops_per_s":`) {
			t.Errorf("ceiling line %s", l)
		}
	}
	required := `{"workload":"w1_chain","store":"memory","runs":5,"steps":50,"seconds":`
	if !strings.HasPrefix(lines[nc], required) {
		t.Errorf("first workload line %s, want prefix %s", lines[nc], required)
	}
	order := []string{"workload", "store", "runs", "steps", "seconds", "steps_per_s", "runs_per_s",
		"peak_rss_mb", "ledger_records_per_run", "commits_per_run", "state_json_bytes"}
	for _, l := range lines[nc:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		last := -1
		for _, k := range order {
			i := strings.Index(l, `"`+k+`":`)
			if i < 0 || i < last {
				t.Errorf("field %s missing or out of order in %s", k, l)
			}
			last = i
		}
		if s, _ := m["samples"].([]any); len(s) != 2 {
			t.Errorf("samples %v, want 2", m["samples"])
		}
		if _, ok := m["page_faults_per_run"].(float64); !ok {
			t.Errorf("page_faults_per_run missing in %s", l)
		}
		if m["isolated"] != false {
			t.Errorf("isolated = %v, want false", m["isolated"])
		}
	}
}

// TestBench_BadFlags checks that bad flags exit 2 without running.
func TestBench_BadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--stores", "nope"},
		{"--workloads", "w9"},
		{"--runs", "0"},
		{"extra"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runBench(context.Background(), args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q", args, code, stdout.String())
		}
	}
}

// TestBenchRefusesCeilingSecondsPastADay: a sample length that would
// overflow a time.Duration (past ~9.2e9 s) would make every ceiling
// sample one operation while its line claimed the flag's seconds; the
// flag is bounded by a day, and the error names it.
func TestBenchRefusesCeilingSecondsPastADay(t *testing.T) {
	for _, v := range []string{"86401", "1e10", "1e300"} {
		var stdout, stderr bytes.Buffer
		if _, code := parseBenchFlags([]string{"--ceiling-seconds", v}, &stdout, &stderr); code != 2 {
			t.Errorf("--ceiling-seconds %s: code %d, want 2", v, code)
		}
		if !strings.Contains(stderr.String(), "--ceiling-seconds") {
			t.Errorf("--ceiling-seconds %s: error %q does not name the flag", v, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if _, code := parseBenchFlags([]string{"--ceiling-seconds", "86400"}, &stdout, &stderr); code != -1 {
		t.Errorf("--ceiling-seconds 86400: code %d (%s), want accepted", code, stderr.String())
	}
}

// bench: --ceiling-seconds accepted NaN and Inf (the check was only
// "< 0"); the ceiling lines then carried "seconds": NaN/+Inf, which json
// cannot encode, so the command failed only after the whole benchmark ran.
func TestBenchRejectsNonFiniteCeilingSeconds(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"NaN", "Inf"} {
		var stderr bytes.Buffer
		if _, code := parseBenchFlags([]string{"--ceiling-seconds", v}, io.Discard, &stderr); code != 2 {
			t.Errorf("--ceiling-seconds %s: parse code %d, want 2 (usage error)", v, code)
		}
	}
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
