package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/internal/benchwork"
)

// benchConfig is the parsed command line of `abstractgateway bench`.
type benchConfig struct {
	stores         []string
	workloads      []string
	runs           int
	dir            string
	repeats        int
	isolate        bool
	ceilingSeconds float64 // at most maxCeilingSeconds
	ceilingSamples int
	child          bool
}

// benchChildFlag marks the re-executed process that measures one (store,
// workload group, repeat); it is not shown in the usage.
const benchChildFlag = "child"

// runBench runs the benchmark workloads and prints one JSON line per
// (workload, store) — the median of the repeats — plus the disk and
// SQLite ceilings measured in the same invocation. It returns 1 when a
// workload's verification (or anything else) failed, 2 on bad flags.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, code := parseBenchFlags(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if cfg.child {
		return benchChild(ctx, cfg, stdout, stderr)
	}
	if err := benchParent(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// maxCeilingSeconds bounds --ceiling-seconds.
const maxCeilingSeconds = 24 * 60 * 60

// parseBenchFlags parses and checks the flags; code is -1 when the
// command should go on. Help (-h) is printed on stdout.
func parseBenchFlags(args []string, stdout, stderr io.Writer) (cfg benchConfig, code int) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stores := fs.String("stores", strings.Join(benchwork.DefaultStores, ","),
		"comma-separated store kinds: "+strings.Join(benchwork.StoreKinds, ", "))
	workloads := fs.String("workloads", strings.Join(benchwork.Workloads, ","), "comma-separated workloads")
	fs.IntVar(&cfg.runs, "runs", 1000, "timed runs per workload (N)")
	fs.StringVar(&cfg.dir, "dir", "", "directory for the stores and the ceiling files (default: a temporary directory, removed at the end)")
	fs.IntVar(&cfg.repeats, "repeats", 3, "samples per (workload, store); the line reports the median")
	fs.BoolVar(&cfg.isolate, "isolate", true, "measure each (store, workload, repeat) in a fresh child process (W1 and W4 share one)")
	fs.Float64Var(&cfg.ceilingSeconds, "ceiling-seconds", 3, "seconds of each ceiling sample (0 skips the ceilings); a ceiling line reports the median "+
		"of the samples before the workloads, of those after, and, as ops_per_s (what the go_vs_* ratios divide by), of all of them")
	fs.IntVar(&cfg.ceilingSamples, "ceiling-samples", 3, "ceiling samples taken before the workloads, and again after")
	fs.BoolVar(&cfg.child, benchChildFlag, false, "internal: measure in this process and print raw samples")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: abstractgateway bench [flags]\n\nRuns the benchmark workloads W1–W4 (docs/benchmarks.md) and prints JSON lines.\n\nflags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name == benchChildFlag {
				return
			}
			def := ""
			if f.DefValue != "" {
				def = " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(w, "  --%s\n    \t%s%s\n", f.Name, f.Usage, def)
		})
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return cfg, code
	}
	bad := func(format string, a ...any) (benchConfig, int) {
		fmt.Fprintf(stderr, "bench: "+format+"\n", a...)
		return cfg, 2
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	cfg.stores = splitList(*stores)
	cfg.workloads = splitList(*workloads)
	if len(cfg.stores) == 0 || len(cfg.workloads) == 0 {
		return bad("--stores and --workloads must name at least one")
	}
	for _, s := range cfg.stores {
		if !benchwork.ValidStore(s) {
			return bad("unknown store %q (want %s)", s, strings.Join(benchwork.StoreKinds, ", "))
		}
	}
	for _, w := range cfg.workloads {
		if !benchwork.ValidWorkload(w) {
			return bad("unknown workload %q (want %s)", w, strings.Join(benchwork.Workloads, ", "))
		}
	}
	if cfg.runs <= 0 || cfg.repeats <= 0 || cfg.ceilingSamples <= 0 || !(cfg.ceilingSeconds >= 0) || math.IsInf(cfg.ceilingSeconds, 0) {
		return bad("--runs, --repeats and --ceiling-samples must be positive and --ceiling-seconds a finite number, not negative")
	}
	if cfg.ceilingSeconds > maxCeilingSeconds {
		// Longer samples would overflow a time.Duration, and no ceiling
		// needs a day to settle.
		return bad("--ceiling-seconds %g is more than a day (%d s)", cfg.ceilingSeconds, maxCeilingSeconds)
	}
	if cfg.child && (len(cfg.stores) != 1 || cfg.dir == "") {
		return bad("--%s needs one store and --dir", benchChildFlag)
	}
	return cfg, -1
}

// splitList splits a comma-separated list, dropping blanks and repeats.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// benchChild measures one store and workload group in this process and
// prints the raw samples, one JSON line each.
func benchChild(ctx context.Context, cfg benchConfig, stdout, stderr io.Writer) int {
	samples, err := benchwork.Measure(ctx, benchwork.MeasureConfig{
		Store: cfg.stores[0], Workloads: cfg.workloads, Runs: cfg.runs, Dir: cfg.dir,
		Isolated: true, Log: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "bench: %s %s: %v\n", cfg.stores[0], strings.Join(cfg.workloads, ","), err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	for _, s := range samples {
		if err := enc.Encode(s); err != nil {
			fmt.Fprintf(stderr, "bench: writing a sample: %v\n", err)
			return 1
		}
	}
	return 0
}

// ceilingLine is the JSON line of one ceiling measurement.
type ceilingLine struct {
	Ceiling string `json:"ceiling"`
	// OpsPerS is the median of every sample, before and after: the value
	// the go_vs_ceiling ratios divide by. Neither phase alone: the disk
	// drifts during an invocation, and the median of both is what
	// bench/peer/compare.py quotes too.
	OpsPerS float64 `json:"ops_per_s"`
	// Samples are the ops/s of each sample in the order taken: the
	// SamplesPerPhase before the workloads, then as many after.
	Samples []float64 `json:"samples"`
	// Seconds is the duration of each sample.
	Seconds float64 `json:"seconds"`
	// SamplesPerPhase is --ceiling-samples.
	SamplesPerPhase int `json:"samples_per_phase"`
	// BeforeOpsPerS and AfterOpsPerS are the medians of each phase, as
	// the bench README's ceiling table quotes them.
	BeforeOpsPerS float64 `json:"before_ops_per_s"`
	AfterOpsPerS  float64 `json:"after_ops_per_s"`
}

// benchParent runs the whole benchmark: ceilings, the repeats (the outer
// loop, so a slow period of the VM hits one sample of every store), the
// ceilings again, then prints the lines.
func benchParent(ctx context.Context, cfg benchConfig, stdout, stderr io.Writer) (err error) {
	if cfg.dir == "" {
		if cfg.dir, err = os.MkdirTemp("", "abstractgateway-bench-"); err != nil {
			return fmt.Errorf("creating a temporary directory: %w", err)
		}
		defer func() { err = errors.Join(err, os.RemoveAll(cfg.dir)) }()
	} else if err = os.MkdirAll(cfg.dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", cfg.dir, err)
	}

	// Each phase takes its samples round by round (one of every ceiling,
	// then the next), so that a slow moment of the disk lands on one
	// sample of every ceiling rather than on every sample of one.
	ceilings := map[string][]float64{}
	measureCeilings := func(when string) error {
		if cfg.ceilingSeconds == 0 {
			return nil
		}
		d := time.Duration(cfg.ceilingSeconds * float64(time.Second))
		for i := 1; i <= cfg.ceilingSamples; i++ {
			for _, name := range benchwork.Ceilings {
				ops, err := benchwork.MeasureCeiling(ctx, name, cfg.dir, d)
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "bench: ceiling %s (%s, %d/%d): %.0f ops/s\n", name, when, i, cfg.ceilingSamples, ops)
				ceilings[name] = append(ceilings[name], ops)
			}
		}
		return nil
	}
	if err := measureCeilings("before"); err != nil {
		return err
	}

	groups := benchGroups(cfg.workloads)
	samples := map[[2]string][]*benchwork.Sample{} // (workload, store) → samples
	failed := map[[2]string]error{}
	for rep := 1; rep <= cfg.repeats; rep++ {
		for _, st := range cfg.stores {
			for _, group := range groups {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted: %w", ctx.Err())
				}
				fmt.Fprintf(stderr, "bench: repeat %d/%d: %s %s\n", rep, cfg.repeats, st, strings.Join(group, ","))
				got, err := benchSample(ctx, cfg, st, group, stderr)
				if err != nil && ctx.Err() != nil {
					// A signal, not a failed check: nothing to report.
					return fmt.Errorf("interrupted: %w", err)
				}
				if err != nil {
					fmt.Fprintf(stderr, "bench: %s %s: %v\n", st, strings.Join(group, ","), err)
					for _, w := range group {
						failed[[2]string{w, st}] = err
					}
					continue
				}
				for _, s := range got {
					k := [2]string{s.Workload, s.Store}
					samples[k] = append(samples[k], s)
				}
			}
		}
	}

	if err := measureCeilings("after"); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, name := range benchwork.Ceilings {
		if s := ceilings[name]; len(s) > 0 {
			n := min(cfg.ceilingSamples, len(s))
			if err := enc.Encode(ceilingLine{Ceiling: name, OpsPerS: median(s), Samples: s, Seconds: cfg.ceilingSeconds,
				SamplesPerPhase: cfg.ceilingSamples, BeforeOpsPerS: median(s[:n]), AfterOpsPerS: median(s[n:])}); err != nil {
				return fmt.Errorf("writing a ceiling line: %w", err)
			}
		}
	}
	for _, st := range cfg.stores {
		for _, w := range benchwork.Workloads {
			k := [2]string{w, st}
			if !slices.Contains(cfg.workloads, w) || failed[k] != nil {
				continue
			}
			line := benchwork.Median(samples[k])
			if line == nil {
				continue
			}
			// The store opens its file exclusively: its commits are
			// compared with the exclusive ceiling of the same
			// synchronous setting. W4 does not commit.
			if w != benchwork.W4LedgerRead {
				switch st {
				case benchwork.StoreSQLite:
					c := benchwork.CeilingSQLiteNormalExclusive
					line.SetCeiling(c, median(ceilings[c]))
				case benchwork.StoreSQLiteFull:
					c := benchwork.CeilingSQLiteFullExclusive
					line.SetCeiling(c, median(ceilings[c]))
					line.SetFdatasyncInplace(median(ceilings[benchwork.CeilingFdatasyncInplace]))
				}
			}
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("writing a result line: %w", err)
			}
		}
	}
	if len(failed) > 0 {
		var names []string
		for k := range failed {
			names = append(names, k[0]+"/"+k[1])
		}
		slices.Sort(names)
		return fmt.Errorf("%d (workload, store) pairs failed and were not reported: %s", len(names), strings.Join(names, ", "))
	}
	return nil
}

// benchGroups splits the workloads into the groups measured by one
// process: W1 and W4 together (W4 reads W1's runs), every other alone.
func benchGroups(workloads []string) [][]string {
	var groups [][]string
	var w1w4 []string
	for _, w := range benchwork.Workloads {
		if !slices.Contains(workloads, w) {
			continue
		}
		if w == benchwork.W1Chain || w == benchwork.W4LedgerRead {
			w1w4 = append(w1w4, w)
			continue
		}
		groups = append(groups, []string{w})
	}
	if len(w1w4) > 0 {
		groups = append([][]string{w1w4}, groups...)
	}
	return groups
}

// benchSample measures one store and workload group: in a fresh child
// process (this executable re-run with --child) when isolating, else
// here.
func benchSample(ctx context.Context, cfg benchConfig, st string, group []string, stderr io.Writer) ([]*benchwork.Sample, error) {
	if !cfg.isolate {
		return benchwork.Measure(ctx, benchwork.MeasureConfig{
			Store: st, Workloads: group, Runs: cfg.runs, Dir: cfg.dir, Log: stderr,
		})
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.CommandContext(ctx, exe, "bench", "--"+benchChildFlag,
		"--stores", st, "--workloads", strings.Join(group, ","),
		"--runs", strconv.Itoa(cfg.runs), "--dir", cfg.dir)
	// On a signal the child is interrupted, not killed, so that it
	// removes its store (a directory under --dir, a PostgreSQL schema);
	// it is killed only if it has not ended 30 s later.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("child process: %w", err)
	}
	var samples []*benchwork.Sample
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var s benchwork.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("reading the child's sample %q: %w", sc.Text(), err)
		}
		samples = append(samples, &s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the child's output: %w", err)
	}
	if len(samples) != len(group) {
		return nil, fmt.Errorf("child printed %d samples, want %d", len(samples), len(group))
	}
	return samples, nil
}

// median returns the median (the mean of the middle two of an even
// count), rounded to 0.1, or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	m := (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	return math.Round(m*10) / 10
}
