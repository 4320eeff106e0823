package crashtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"go.uber.org/goleak"
)

// The environment of the child process TestRealKill starts: the store
// kind, the data directory and the generation (a prefix for run ids).
const (
	envChildStore = "CRASHTEST_CHILD_STORE"
	envChildDir   = "CRASHTEST_CHILD_DIR"
	envChildGen   = "CRASHTEST_CHILD_GEN"
	// envChildCancel makes the child build trees of runs and cancel them
	// (TestRealKillCancel) instead of running the scenarios.
	envChildCancel = "CRASHTEST_CHILD_CANCEL"
)

// The environment of a child life of TestRealKillEveryPoint and its kin
// (realkill_every_point_test.go): the store kind, the data directory, the
// kill point and phase, the workflow, and the decorator stack of the
// claims scenarios.
const (
	pointEnvKind  = "CRASHTEST_KILL_KIND"
	pointEnvDir   = "CRASHTEST_KILL_DIR"
	pointEnvPoint = "CRASHTEST_KILL_POINT"
	pointEnvPhase = "CRASHTEST_KILL_PHASE"
	pointEnvWF    = "CRASHTEST_KILL_WF"
	pointEnvStack = "CRASHTEST_KILL_STACK"
)

// killEveryPointChild is that child life; nil in race builds, which leave
// those tests out.
var killEveryPointChild func() int

// TestMain turns the test binary into TestRealKill's child process, or
// into a child life of TestRealKillEveryPoint, when the environment asks
// for it.
func TestMain(m *testing.M) {
	if os.Getenv(pointEnvKind) != "" && killEveryPointChild != nil {
		os.Exit(killEveryPointChild())
	}
	if kind := os.Getenv(envChildStore); kind != "" {
		if os.Getenv(envChildCancel) != "" {
			os.Exit(childCancelMain(kind, os.Getenv(envChildDir), os.Getenv(envChildGen)))
		}
		os.Exit(childMain(kind, os.Getenv(envChildDir), os.Getenv(envChildGen)))
	}
	code := m.Run()
	if code == 0 {
		// No goroutine may outlive the tests (goleak in the other packages).
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// openKind opens the store kind on dir, as every life of the data does.
func openKind(ctx context.Context, kind, dir string) (store.Store, error) {
	switch kind {
	case "sqlite":
		return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3")})
	case "sqlite_full":
		return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3"), Synchronous: "FULL"})
	case "json":
		// A killed process loses nothing the kernel has accepted: fsync
		// matters for power loss, not here.
		return jsonfile.New(jsonfile.Config{Dir: filepath.Join(dir, "store"), NoSync: true})
	case "json_fsync":
		return jsonfile.New(jsonfile.Config{Dir: filepath.Join(dir, "store")}) // the default configuration
	case "postgres":
		schema, err := os.ReadFile(filepath.Join(dir, "schema"))
		if err != nil {
			return nil, err
		}
		return postgres.New(ctx, postgres.Config{URL: os.Getenv("TEST_POSTGRES_URL"), Schema: string(schema)})
	}
	return nil, fmt.Errorf("unknown store kind %q", kind)
}

// childMain is one life of the data: finish the runs earlier lives left,
// then start and finish new ones until killed. It prints "started <id>"
// once a run's start has returned and "done <id>" once it completed; every
// "charge" execution is appended to effects.log (synced) before the
// handler returns.
func childMain(kind, dir, gen string) int {
	ctx := context.Background()
	logEffect, err := effectLogger(dir)
	if err != nil {
		return childFail(err)
	}
	st, rt, err := openChild(ctx, kind, dir, func(key string) {
		logEffect(key)
		// A charge takes a moment, as a real call would: kills land
		// inside effects too, between the execution and its record.
		time.Sleep(time.Millisecond)
	})
	if err != nil {
		return childFail(err)
	}
	unfinished, err := unfinishedParents(ctx, st)
	if err != nil {
		return childFail(err)
	}
	for _, id := range unfinished {
		if _, err := drive(ctx, rt, id); err != nil {
			return childFail(fmt.Errorf("recovering %s: %w", id, err))
		}
		fmt.Println("done", id)
	}
	for i := range 1000 {
		id := fmt.Sprintf("g%s-r%d", gen, i)
		wf := scenarios[i%len(scenarios)]
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: id}); err != nil {
			return childFail(err)
		}
		fmt.Println("started", id)
		if _, err := drive(ctx, rt, id); err != nil {
			return childFail(fmt.Errorf("run %s: %w", id, err))
		}
		fmt.Println("done", id)
	}
	return 0
}

// unfinishedParents lists the top-level runs of the scenarios that have
// not ended (their children are driven by recovery).
func unfinishedParents(ctx context.Context, st store.Store) ([]string, error) {
	runs, err := scenarioRuns(ctx, st)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range runs {
		if !r.Status.Terminal() {
			ids = append(ids, r.RunID)
		}
	}
	return ids, nil
}

// scenarioRuns lists the top-level runs of every scenario.
func scenarioRuns(ctx context.Context, st store.Store) ([]*durable.RunState, error) {
	var out []*durable.RunState
	for _, wf := range scenarios {
		runs, err := st.RunList(ctx, &store.RunListParams{WorkflowID: wf, Limit: 100000})
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	return out, nil
}

// TestRealKill kills a real process running workflows (SIGKILL, at a
// random moment) several times on the same data, and checks after each
// death what the in-process harness checks after a simulated one: every
// run whose start returned exists, every run reported done is completed
// with the right output, and no effect whose completion was durable runs
// again; finally every run finishes with the right output and exactly one
// terminal record.
func TestRealKill(t *testing.T) {
	t.Parallel()
	want := referenceOutputs(t)
	for _, kind := range []string{"sqlite", "json", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if kind == "postgres" {
				preparePostgres(t, dir)
			}
			realKill(t, kind, dir, want)
		})
	}
}

// preparePostgres picks a fresh schema for the lives of the data (written
// to dir/schema) and drops it when the test ends; without a server the
// test is skipped, as every PostgreSQL test is.
func preparePostgres(t *testing.T, dir string) {
	url := os.Getenv("TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("set TEST_POSTGRES_URL=postgres://… to run the PostgreSQL kill test; CI starts a server with .ci/postgres.sh")
	}
	schema := fmt.Sprintf("kill_%d_%d", os.Getpid(), rand.Uint32())
	if err := os.WriteFile(filepath.Join(dir, "schema"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Error(err)
		}
	})
}

// referenceOutputs are the outputs of the scenarios run without a kill,
// by workflow id.
func referenceOutputs(t *testing.T) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	rt := newRuntime(t, memory.New(), func(string) {})
	out := map[string]map[string]any{}
	for _, wf := range scenarios {
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: "ref-" + wf}); err != nil {
			t.Fatal(err)
		}
		st, err := drive(ctx, rt, "ref-"+wf)
		if err != nil || st.Status != durable.RunCompleted {
			t.Fatalf("reference run of %s: %v", wf, err)
		}
		out[wf] = st.Output
	}
	return out
}

func realKill(t *testing.T, kind, dir string, want map[string]map[string]any) {
	ctx := context.Background()
	const lives = 8
	started, done := map[string]bool{}, map[string]bool{}
	durableCounts := map[string]int{} // effect key → executions when its completion was seen durable
	for gen := range lives {
		for _, line := range liveAndDie(t, kind, dir, gen) {
			verb, id, _ := strings.Cut(line, " ")
			switch verb {
			case "started":
				started[id] = true
			case "done":
				done[id] = true
			}
		}
		st, err := openKind(ctx, kind, dir)
		if err != nil {
			t.Fatalf("life %d: reopening after the kill: %v", gen, err)
		}
		counts := effectCounts(t, dir)
		for id := range started {
			if _, err := st.RunGet(ctx, id); err != nil {
				t.Errorf("life %d: run %s was started, now: %v", gen, id, err)
			}
		}
		for id := range done {
			checkCompleted(ctx, t, st, id, want)
		}
		checkLists(ctx, t, st, gen, started)
		for key, n := range durableCounts {
			if counts[key] != n {
				t.Errorf("life %d: effect %s ran again after its completion was durable (%d → %d)", gen, key, n, counts[key])
			}
		}
		for key := range completedKeys(ctx, t, st) {
			durableCounts[key] = counts[key]
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(done) == 0 {
		t.Fatal("no run finished in any life: the kills came too early to test anything")
	}

	// Last life, in process: finish what the kills interrupted.
	st, err := openKind(ctx, kind, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logEffect, err := effectLogger(dir)
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, st, logEffect)
	unfinished, err := unfinishedParents(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range unfinished {
		if _, err := drive(ctx, rt, id); err != nil {
			t.Fatalf("finishing %s: %v", id, err)
		}
	}
	runs, err := scenarioRuns(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		checkCompleted(ctx, t, st, r.RunID, want)
	}
	for _, id := range allRuns(ctx, t, st) {
		checkOneCharge(ctx, t, st, id)
	}
	counts := effectCounts(t, dir)
	reruns := 0
	for key, n := range counts {
		if d, ok := durableCounts[key]; ok && n != d {
			t.Errorf("effect %s ran again after its completion was durable (%d → %d)", key, d, n)
		}
		reruns += n - 1
	}
	for key := range completedKeys(ctx, t, st) {
		if counts[key] == 0 {
			t.Errorf("effect %s has a completion but never ran", key)
		}
	}
	// A kill interrupts at most one effect in flight (runs go one at a
	// time), so at most one execution per life is repeated.
	if reruns > lives {
		t.Errorf("%d repeated effect executions for %d kills", reruns, lives)
	}
	t.Logf("%s: %d runs over %d lives, %d started before a kill, %d repeated effect executions",
		kind, len(runs), lives, len(started), reruns)
}

// startWithLines starts cmd and returns its stdout line by line; the
// channel closes when the output ends.
func startWithLines(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// liveAndDie starts a child on dir, kills it (SIGKILL) a random moment
// after it has started a few runs, and returns the lines it printed.
func liveAndDie(t *testing.T, kind, dir string, gen int, env ...string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildStore+"="+kind, envChildDir+"="+dir, envChildGen+"="+strconv.Itoa(gen))
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	lines := startWithLines(t, cmd)
	var got []string
	startedRuns := 0
	threshold := 1 + rand.IntN(4)
	if gen == 0 {
		// The first life is killed after its second run at the earliest,
		// so that what the first run finished (its cancel, its output) is
		// there to check whatever moments the later kills pick: with a
		// kill after the first run in every life, a slow first step could
		// leave a test nothing to check (a CI run under -race hit it).
		threshold = 2 + rand.IntN(3)
	}
	var killAt <-chan time.Time
	deadline := time.After(30 * time.Second)
	for lines != nil {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil
				break
			}
			got = append(got, line)
			if strings.HasPrefix(line, "started ") {
				startedRuns++
				if startedRuns == threshold {
					killAt = time.After(time.Duration(rand.IntN(15000)) * time.Microsecond)
				}
			}
		case <-killAt:
			_ = cmd.Process.Kill()
			killAt = nil
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("life %d: the child neither progressed nor died in time; stderr: %s", gen, stderr.String())
		}
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("life %d: the child ended by itself (%v), not by the kill; stderr: %s", gen, err, stderr.String())
	}
	return got
}

// checkCompleted checks that run id completed with the output of its
// workflow in want (child run ids aside: they derive from the run's id)
// and has exactly one terminal status record.
func checkCompleted(ctx context.Context, t *testing.T, st store.Store, id string, want map[string]map[string]any) {
	t.Helper()
	r, err := st.RunGet(ctx, id)
	if err != nil {
		t.Errorf("run %s: %v", id, err)
		return
	}
	if r.Status != durable.RunCompleted ||
		!reflect.DeepEqual(normalize(r.Output, "sub_run_id"), normalize(want[r.WorkflowID], "sub_run_id")) {
		t.Errorf("run %s: %s %v, want completed %v", id, r.Status, r.Output, want[r.WorkflowID])
	}
	checkLedgerEndsOnce(ctx, t, st, id)
}

// checkLedgerEndsOnce checks that run id's ledger has its seqs in order
// and exactly one terminal status record.
func checkLedgerEndsOnce(ctx context.Context, t *testing.T, st store.Store, id string) {
	t.Helper()
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Errorf("ledger of %s: %v", id, err)
		return
	}
	terminal := 0
	for i, rec := range recs {
		if rec.Seq != int64(i+1) {
			t.Errorf("ledger of %s: record %d has seq %d", id, i, rec.Seq)
		}
		if rec.IdempotencyKey == "system:terminal_status:completed" {
			terminal++
		}
	}
	if terminal != 1 {
		t.Errorf("run %s: %d terminal status records, want exactly 1", id, terminal)
	}
}

// checkLists checks, after a kill, that the store's lists agree with its
// runs: every started run is listed, and the list of each status holds
// exactly the runs RunGet finds in that status (a store that brings its
// list indexes up to date in batches must have caught up).
func checkLists(ctx context.Context, t *testing.T, st store.Store, gen int, started map[string]bool) {
	t.Helper()
	listed := map[string]bool{}
	byStatus := map[durable.RunStatus]map[string]bool{}
	for _, id := range allRuns(ctx, t, st) {
		listed[id] = true
		r, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatalf("life %d: listed run %s: %v", gen, id, err)
		}
		if byStatus[r.Status] == nil {
			byStatus[r.Status] = map[string]bool{}
		}
		byStatus[r.Status][id] = true
	}
	for id := range started {
		if !listed[id] {
			t.Errorf("life %d: run %s was started but is not listed", gen, id)
		}
	}
	for status, want := range byStatus {
		runs, err := st.RunList(ctx, &store.RunListParams{Status: status, Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, r := range runs {
			got[r.RunID] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("life %d: runs listed as %s: %d, want the %d RunGet finds so", gen, status, len(got), len(want))
		}
	}
}

// completedKeys returns the idempotency keys of the completed "charge"
// records of every run in the store.
func completedKeys(ctx context.Context, t *testing.T, st store.Store) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, id := range allRuns(ctx, t, st) {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if rec.Status == durable.StepCompleted && rec.Effect != nil && rec.Effect.Type == "charge" {
				keys[rec.IdempotencyKey] = true
			}
		}
	}
	return keys
}

// effectCounts reads effects.log: executions per idempotency key.
func effectCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" {
			counts[line]++
		}
	}
	return counts
}

// effectLogger returns a function appending an executed effect's key to
// dir/effects.log, synced, as every life of the data and the test do.
func effectLogger(dir string) (func(key string), error) {
	f, err := os.OpenFile(filepath.Join(dir, "effects.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return func(key string) {
		_, _ = f.WriteString(key + "\n")
		_ = f.Sync()
	}, nil
}

// openChild opens a child process's store and its runtime, whose
// "charge" handler calls executed.
func openChild(ctx context.Context, kind, dir string, executed func(key string)) (store.Store, *runtime.Runtime, error) {
	st, err := openKind(ctx, kind, dir)
	if err != nil {
		return nil, nil, err
	}
	rt, err := buildRuntime(st, executed, nil)
	return st, rt, err
}

// childFail reports a child's error and its exit code.
func childFail(err error) int {
	fmt.Fprintln(os.Stderr, "child:", err)
	return 2
}

// childCancelMain is TestRealKillCancel's child: it builds trees of runs
// (root → mid → leaf, each parked on its child, the leaf on a person) and
// cancels each, printing "started <root>" and "cancelled <root>".
func childCancelMain(kind, dir, gen string) int {
	ctx := context.Background()
	_, rt, err := openChild(ctx, kind, dir, func(string) {}) // no charges in these trees
	if err != nil {
		return childFail(err)
	}
	for i := range 1000 {
		id := fmt.Sprintf("g%s-c%d", gen, i)
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "cancel_root", RunID: id}); err != nil {
			return childFail(err)
		}
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			return childFail(err)
		}
		fmt.Println("started", id)
		if _, err := rt.Cancel(ctx, id, ""); err != nil {
			return childFail(err)
		}
		fmt.Println("cancelled", id)
	}
	return 0
}

// TestRealKillCancel kills processes that cancel trees of runs at random
// moments: whatever moment a kill hits, no unfinished run is left under a
// cancelled ancestor, and every tree whose cancel returned has ended.
func TestRealKillCancel(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "json", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if kind == "postgres" {
				preparePostgres(t, dir)
			}
			ctx := context.Background()
			cancelled := map[string]bool{}
			for gen := range 6 {
				for _, line := range liveAndDie(t, kind, dir, gen, envChildCancel+"=1") {
					if id, ok := strings.CutPrefix(line, "cancelled "); ok {
						cancelled[id] = true
					}
				}
				st, err := openKind(ctx, kind, dir)
				if err != nil {
					t.Fatalf("life %d: reopening after the kill: %v", gen, err)
				}
				checkCancelledTrees(ctx, t, st, gen, cancelled)
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if len(cancelled) == 0 {
				t.Fatal("no cancel returned in any life: the kills came too early to test anything")
			}
		})
	}
}

// checkCancelledTrees checks every run of st: none unfinished under a
// cancelled ancestor, and the trees of the roots whose cancel returned all
// ended.
func checkCancelledTrees(ctx context.Context, t *testing.T, st store.Store, gen int, cancelled map[string]bool) {
	t.Helper()
	byID := map[string]*durable.RunState{}
	for _, id := range allRuns(ctx, t, st) {
		r, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		byID[id] = r
	}
	for id, r := range byID {
		if r.Status.Terminal() {
			continue
		}
		root := id
		for p := r.ParentRunID; p != ""; p = byID[p].ParentRunID {
			if byID[p] == nil {
				break
			}
			if byID[p].Status == durable.RunCancelled {
				t.Errorf("life %d: run %s (%s) is %s under cancelled ancestor %s", gen, id, r.WorkflowID, r.Status, p)
			}
			root = p
		}
		if cancelled[root] {
			t.Errorf("life %d: run %s (%s) of tree %s is %s though its cancel returned", gen, id, r.WorkflowID, root, r.Status)
		}
	}
}
