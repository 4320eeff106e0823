package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestTopLevelHelpSpellings: "help", "-h" and "--help" each print the
// top-level usage on stdout and exit 0, as every subcommand's -h/--help does.
func TestTopLevelHelpSpellings(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"help", "-h", "--help"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{arg}, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "usage: abstractgateway <command>") || errb.Len() != 0 {
			t.Errorf("abstractgateway %s: exit %d, stdout %q, stderr %q; want the usage on stdout, exit 0", arg, code, out.String(), errb.String())
		}
	}
}

// TestMissingFileSaysMissing: a command that needs a file and got none
// says what is missing (not "got []"), then exits 2 with its usage.
func TestMissingFileSaysMissing(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"inspect"}, {"pack"}, {"run"}} {
		code, out, errOut := call(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "missing one") || !strings.Contains(errOut, "usage:") {
			t.Errorf("bundle %s: exit %d, stdout %q, stderr %q; want exit 2 and \"missing one ...\" with the usage",
				args[0], code, out, errOut)
		}
	}
}

// TestBenchRunsDefault: bench times N = 1000 runs per workload unless
// --runs says otherwise (docs/benchmarks.md).
func TestBenchRunsDefault(t *testing.T) {
	t.Parallel()
	cfg, code := parseBenchFlags(nil, io.Discard, io.Discard)
	if code != -1 || cfg.runs != 1000 || cfg.repeats != 3 || !cfg.isolate {
		t.Fatalf("defaults: code %d, --runs %d, --repeats %d, --isolate %v; want 1000, 3, true", code, cfg.runs, cfg.repeats, cfg.isolate)
	}
}

// TestMedianRoundsToATenth: median is the middle value (the mean of the
// middle two of an even count), rounded to 0.1, and 0 for no values.
func TestMedianRoundsToATenth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{1234.5678}, 1234.6},
		{[]float64{3, 1.04, 2}, 2},
		{[]float64{10, 1, 2.26, 3}, 2.6},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
