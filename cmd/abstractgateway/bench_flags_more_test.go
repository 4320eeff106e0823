package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchW4AloneRunsW1Unreported: the README's "W4 reads W1's
// runs, so W1 and W4 share a process": asking for W4 only still runs W1
// on the same store (its N runs are what W4 reads) but prints only the W4
// line, with steps = records read (2 per W1 run).
func TestBenchW4AloneRunsW1Unreported(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runBench(context.Background(), []string{
		"--stores", "memory", "--workloads", "w4_ledger_read", "--runs", "4", "--repeats", "1",
		"--isolate=false", "--ceiling-seconds", "0", "--dir", t.TempDir(),
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1 (W4 only):\n%s", len(lines), stdout.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	if m["workload"] != "w4_ledger_read" || m["runs"] != 4.0 || m["steps"] != 8.0 || m["ledger_records_per_run"] != 2.0 {
		t.Errorf("W4 line %s", lines[0])
	}
	if s, ok := m["seconds"].(float64); !ok || s <= 0 {
		t.Errorf("seconds %v", m["seconds"])
	}
}

// TestBenchMoreBadFlags: negative --runs, empty lists and a
// workload name in the wrong case exit 2 and print nothing on stdout.
func TestBenchMoreBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--runs", "-1"},
		{"--stores", ""},
		{"--workloads", " , "},
		{"--workloads", "W1_CHAIN"},
		{"--stores", "sqlite,bogus"},
		{"--runs", "ten"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runBench(context.Background(), args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q", args, code, stdout.String())
		}
	}
}
