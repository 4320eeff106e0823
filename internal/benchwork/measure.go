package benchwork

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
)

// Sample is one JSON line of the bench command: one workload on one store,
// from one process (a repeat), or the median of the repeats with all of
// their seconds in Samples. The fields the Python peer prints come first.
type Sample struct {
	Workload            string  `json:"workload"`
	Store               string  `json:"store"`
	Runs                int     `json:"runs"`
	Steps               int64   `json:"steps"`
	Seconds             float64 `json:"seconds"`
	StepsPerS           float64 `json:"steps_per_s"`
	RunsPerS            float64 `json:"runs_per_s"`
	PeakRSSMB           float64 `json:"peak_rss_mb"`
	LedgerRecordsPerRun float64 `json:"ledger_records_per_run"`
	CommitsPerRun       float64 `json:"commits_per_run"`
	StateJSONBytes      int64   `json:"state_json_bytes"`

	// Samples are the seconds of every repeat, ascending (median lines).
	Samples []float64 `json:"samples,omitempty"`
	// OpsPerRun is the store calls per run counted on the 5-run pilot.
	OpsPerRun map[string]float64 `json:"ops_per_run"`
	// LedgerBytesPerRun is the ledger of a run as json.dumps writes it (W4: the
	// records read).
	LedgerBytesPerRun float64 `json:"ledger_bytes_per_run"`
	// AllocsPerStep is Go heap allocations in the timed loop per step.
	AllocsPerStep float64 `json:"allocs_per_step"`
	// PageFaultsPerRun is the process's minor page faults in the timed
	// loop per run: memory touched for the first time, each costing what
	// the page_first_touch ceiling says (W4: per run read).
	PageFaultsPerRun float64 `json:"page_faults_per_run"`
	// Fsync reports whether the store fsyncs every commit.
	Fsync bool `json:"fsync"`
	// FileWritesPerRun (JSON stores): run-file replacements plus ledger
	// appends per run in the timed loop.
	FileWritesPerRun *float64 `json:"file_writes_per_run,omitempty"`

	// W3b only.
	PhaseAS            *float64 `json:"phase_a_s,omitempty"`
	PhaseBS            *float64 `json:"phase_b_s,omitempty"`
	Cycles             *int     `json:"cycles,omitempty"`
	ImmediateFallbacks *int     `json:"immediate_fallbacks,omitempty"`

	// GoVsCeiling (the workloads that commit, W1 to W3b, on sqlite and
	// sqlite_full): commits/s achieved ÷ the commit ceiling of the same
	// synchronous setting and locking mode as the store
	// (sqlite_wal_normal_exclusive, sqlite_wal_full_exclusive), measured
	// in the same invocation.
	GoVsCeiling *float64 `json:"go_vs_ceiling,omitempty"`
	// GoVsCeilingOf names the ceiling GoVsCeiling divides by.
	GoVsCeilingOf string `json:"go_vs_ceiling_of,omitempty"`
	// GoVsFdatasyncInplace (sqlite_full): commits/s ÷ the
	// fdatasync_inplace ceiling, what the store's FULL commit (a redo-log
	// record written into existing blocks and fdatasynced) costs on this
	// disk; it may differ from GoVsCeiling either way.
	GoVsFdatasyncInplace *float64 `json:"go_vs_fdatasync_inplace,omitempty"`
	// CommitsPerS is commits_per_run × runs_per_s (set with GoVsCeiling).
	CommitsPerS *float64 `json:"commits_per_s,omitempty"`

	// Isolated is true when the sample's process ran only its workload
	// (W1 and W4 share one), so peak_rss_mb is that workload's.
	Isolated bool `json:"isolated"`
}

// DefaultPilotRuns is the size of the untimed pilot.
const DefaultPilotRuns = 5

// MeasureConfig is the input of Measure.
type MeasureConfig struct {
	// Store is the store kind.
	Store string
	// Workloads are measured in Workloads order; W4 always runs after W1
	// on W1's store (W1 runs, unreported, when only W4 is asked for).
	Workloads []string
	// Runs is N, the timed runs per workload.
	Runs int
	// Pilot is the untimed pilot's runs; 0 means DefaultPilotRuns.
	Pilot int
	// Dir is where stores are created (one fresh subdirectory per store
	// instance, removed after use).
	Dir string
	// Isolated is copied into the samples.
	Isolated bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Measure runs the asked workloads on one store kind as the Python
// harness does in one process: for each workload a pilot on its own store
// instance (untimed, counts the store calls per run), then a fresh store,
// N timed runs and the untimed verification of every run. It returns one
// sample per workload, or the first error (a failed verification
// included).
func Measure(ctx context.Context, cfg MeasureConfig) ([]*Sample, error) {
	if !ValidStore(cfg.Store) {
		return nil, fmt.Errorf("unknown store %q", cfg.Store)
	}
	if cfg.Runs <= 0 {
		return nil, fmt.Errorf("runs must be positive, got %d", cfg.Runs)
	}
	for _, w := range cfg.Workloads {
		if !ValidWorkload(w) {
			return nil, fmt.Errorf("unknown workload %q", w)
		}
	}
	m := &measurer{cfg: cfg, pilot: cmp.Or(cfg.Pilot, DefaultPilotRuns), log: cfg.Log}
	if m.log == nil {
		m.log = io.Discard
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", cfg.Dir, err)
	}
	var samples []*Sample
	want := func(w string) bool { return slices.Contains(cfg.Workloads, w) }
	if want(W1Chain) || want(W4LedgerRead) {
		s, err := m.w1w4(ctx, want(W1Chain), want(W4LedgerRead))
		if err != nil {
			return nil, err
		}
		samples = append(samples, s...)
	}
	for _, w := range []string{W2AskResume, W3Past, W3Due} {
		if !want(w) {
			continue
		}
		s, err := m.single(ctx, w)
		if err != nil {
			return nil, err
		}
		samples = append(samples, s)
	}
	return samples, nil
}

type measurer struct {
	cfg   MeasureConfig
	pilot int
	log   io.Writer
}

// env opens a fresh store instance in a new subdirectory of Dir; the
// returned function closes it and removes the directory.
func (m *measurer) env(ctx context.Context, name string) (*Env, func() error, error) {
	dir, err := os.MkdirTemp(m.cfg.Dir, m.cfg.Store+"-"+name+"-")
	if err != nil {
		return nil, nil, fmt.Errorf("creating a store directory: %w", err)
	}
	env, err := NewEnv(ctx, m.cfg.Store, filepath.Join(dir, "data"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	return env, func() error {
		return errors.Join(env.Close(), os.RemoveAll(dir))
	}, nil
}

// pilotRun runs the pilot of workload w (for W4: W1's pilot, then W4 over
// its runs) and returns the pilot's outcome.
func (m *measurer) pilotRun(ctx context.Context, w string) (_ *Outcome, err error) {
	env, done, err := m.env(ctx, "pilot-"+w)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, done()) }()
	if w == W4LedgerRead {
		o1, err := RunW1(ctx, env, m.pilot, nil)
		if err != nil {
			return nil, fmt.Errorf("pilot: %w", err)
		}
		o, err := RunW4(ctx, env, o1.RunIDs, nil)
		if err != nil {
			return nil, fmt.Errorf("pilot: %w", err)
		}
		return o, nil
	}
	o, err := Run(ctx, env, w, m.pilot, nil)
	if err != nil {
		return nil, fmt.Errorf("pilot: %w", err)
	}
	return o, nil
}

// w1w4 measures W1, then W4 on W1's store.
func (m *measurer) w1w4(ctx context.Context, reportW1, runW4 bool) (_ []*Sample, err error) {
	p1, err := m.pilotRun(ctx, W1Chain)
	if err != nil {
		return nil, err
	}
	var p4 *Outcome
	if runW4 {
		if p4, err = m.pilotRun(ctx, W4LedgerRead); err != nil {
			return nil, err
		}
	}
	env, done, err := m.env(ctx, W1Chain)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, done()) }()
	goruntime.GC()
	o1, err := RunW1(ctx, env, m.cfg.Runs, &Stopwatch{})
	if err != nil {
		return nil, err
	}
	rss1 := PeakRSSMB() // before verification, as the peer reads it
	v1, err := Verify(ctx, env, o1)
	if err != nil {
		return nil, fmt.Errorf("verification failed: %w", err)
	}
	var out []*Sample
	if reportW1 {
		out = append(out, m.sample(o1, v1, p1, rss1))
	}
	if runW4 {
		goruntime.GC()
		o4, err := RunW4(ctx, env, o1.RunIDs, &Stopwatch{})
		if err != nil {
			return nil, err
		}
		rss4 := PeakRSSMB()
		v4, err := Verify(ctx, env, o4)
		if err != nil {
			return nil, fmt.Errorf("verification failed: %w", err)
		}
		out = append(out, m.sample(o4, v4, p4, rss4))
	}
	return out, nil
}

// single measures one of W2, W3, W3b.
func (m *measurer) single(ctx context.Context, w string) (_ *Sample, err error) {
	p, err := m.pilotRun(ctx, w)
	if err != nil {
		return nil, err
	}
	env, done, err := m.env(ctx, w)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, done()) }()
	goruntime.GC()
	o, err := Run(ctx, env, w, m.cfg.Runs, &Stopwatch{})
	if err != nil {
		return nil, err
	}
	rss := PeakRSSMB() // before verification, as the peer reads it
	v, err := Verify(ctx, env, o)
	if err != nil {
		return nil, fmt.Errorf("verification failed: %w", err)
	}
	return m.sample(o, v, p, rss), nil
}

// sample turns a verified outcome into a JSON line; rss is the peak RSS
// read after the timed loop, before verification.
func (m *measurer) sample(o *Outcome, v *Verified, pilot *Outcome, rss float64) *Sample {
	runs := float64(len(o.RunIDs))
	secs := o.Elapsed.Seconds()
	s := &Sample{
		Workload: o.Workload, Store: m.cfg.Store, Runs: len(o.RunIDs), Steps: o.Steps,
		Seconds:             round(secs, 6),
		StepsPerS:           round(float64(o.Steps)/secs, 1),
		RunsPerS:            round(runs/secs, 1),
		PeakRSSMB:           round(rss, 1),
		LedgerRecordsPerRun: round(float64(v.LedgerRecords)/runs, 3),
		CommitsPerRun:       round(float64(o.Ops.Commits())/runs, 3),
		StateJSONBytes:      int64(float64(v.StateBytes)/runs + 0.5),
		OpsPerRun:           pilot.Ops.PerRun(len(pilot.RunIDs)),
		LedgerBytesPerRun:   round(float64(v.LedgerBytes)/runs, 1),
		PageFaultsPerRun:    round(float64(o.Faults)/runs, 2),
		Fsync:               Fsync(m.cfg.Store),
		Isolated:            m.cfg.Isolated,
	}
	if o.Steps > 0 {
		s.AllocsPerStep = round(float64(o.Mallocs)/float64(o.Steps), 1)
	}
	if m.cfg.Store == StoreJSON || m.cfg.Store == StoreJSONFsync {
		fw := round(float64(o.Ops.FileWrites)/runs, 3)
		s.FileWritesPerRun = &fw
	}
	if o.Workload == W3Due {
		a, b := round(o.PhaseA.Seconds(), 6), round(o.PhaseB.Seconds(), 6)
		cycles, fallbacks := o.Cycles, o.ImmediateFallbacks
		s.PhaseAS, s.PhaseBS, s.Cycles, s.ImmediateFallbacks = &a, &b, &cycles, &fallbacks
	}
	fmt.Fprintf(m.log, "bench: %s/%s: %d runs in %.3fs (%.0f runs/s)\n", s.Workload, s.Store, s.Runs, secs, s.RunsPerS)
	return s
}

// Median returns a copy of the sample with the median seconds (the lower
// one of an even count) with Samples set to every sample's seconds,
// ascending. It returns nil for no samples.
func Median(samples []*Sample) *Sample {
	if len(samples) == 0 {
		return nil
	}
	sorted := slices.Clone(samples)
	slices.SortStableFunc(sorted, func(a, b *Sample) int { return cmp.Compare(a.Seconds, b.Seconds) })
	med := *sorted[(len(sorted)-1)/2]
	med.Samples = make([]float64, len(sorted))
	for i, s := range sorted {
		med.Samples[i] = s.Seconds
	}
	return &med
}

// SetCeiling sets GoVsCeiling, GoVsCeilingOf and CommitsPerS: the
// commits per second the sample achieved over the commit ceiling name
// (ops/s). It does nothing when ops is not positive (not measured).
func (s *Sample) SetCeiling(name string, ops float64) {
	if ratio := s.commitsOver(ops); ratio != nil {
		s.GoVsCeiling, s.GoVsCeilingOf = ratio, name
	}
}

// SetFdatasyncInplace sets GoVsFdatasyncInplace and CommitsPerS from the
// fdatasync_inplace ceiling (ops/s); nothing when ops is not positive.
func (s *Sample) SetFdatasyncInplace(ops float64) {
	if ratio := s.commitsOver(ops); ratio != nil {
		s.GoVsFdatasyncInplace = ratio
	}
}

// commitsOver sets CommitsPerS and returns it ÷ ceiling, or nil when
// ceiling is not positive.
func (s *Sample) commitsOver(ceiling float64) *float64 {
	if ceiling <= 0 {
		return nil
	}
	cps := round(s.CommitsPerRun*s.RunsPerS, 1)
	ratio := round(cps/ceiling, 3)
	s.CommitsPerS = &cps
	return &ratio
}
