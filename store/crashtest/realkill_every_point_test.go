//go:build !race

package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// The in-process harness (Run, RunClaimsArtifacts, the crash flows)
// "kills" by returning ErrKilled and then closes the backend before
// reopening it, and Close of the SQLite store applies its redo log, so
// none of its kill points leaves what a real death leaves; TestRealKill
// dies for real, at random moments. The tests here kill a real process
// (SIGKILL, no Close) at every persistence point of each phase, on SQLite
// NORMAL and FULL, the JSON store with fsync (its default) and PostgreSQL,
// then finish the run in a new life and check what the harness checks.
// Each kill is a child process: under the race detector (-race) that is
// slow and adds nothing, so this file is left out of race builds.

func init() { killEveryPointChild = everyPointChildMain }

// everyPointChildMain is a child life of TestRealKillEveryPoint and its
// kin (TestMain runs it): it runs the scenario through a killer at the
// given point and SIGKILLs itself right after the kill, never closing
// the store.
func everyPointChildMain() int {
	if os.Getenv(pointEnvStack) != "" {
		return claimsPointChildMain()
	}
	ctx := context.Background()
	c, err := openPointChild(ctx)
	if err != nil {
		return childFail(err)
	}
	point, wf := c.point, c.wf
	killer := Wrap(c.st, point, c.phase)
	rt, err := buildRuntime(killer, c.logEffect, nil)
	if err != nil {
		return childFail(err)
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: "crash-run"}); err == nil {
		_, _ = drive(ctx, rt, "crash-run")
	}
	if !killer.Dead() {
		return childFail(fmt.Errorf("kill at %d never happened", point))
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// pointChild is what a child life reads from its environment and opens.
type pointChild struct {
	dir, wf   string
	point     int
	phase     Phase
	logEffect func(key string)
	st        store.Store
}

func openPointChild(ctx context.Context) (*pointChild, error) {
	c := &pointChild{dir: os.Getenv(pointEnvDir), wf: os.Getenv(pointEnvWF)}
	c.point, _ = strconv.Atoi(os.Getenv(pointEnvPoint))
	phase, _ := strconv.Atoi(os.Getenv(pointEnvPhase))
	c.phase = Phase(phase)
	var err error
	if c.logEffect, err = effectLogger(c.dir); err != nil {
		return nil, err
	}
	if c.st, err = openKind(ctx, os.Getenv(pointEnvKind), c.dir); err != nil {
		return nil, err
	}
	return c, nil
}

func TestRealKillEveryPoint(t *testing.T) {
	t.Parallel()
	kinds := []string{"sqlite", "sqlite_full", "json_fsync", "postgres"}
	for _, kind := range kinds {
		for _, wf := range scenarios {
			t.Run(kind+"/"+wf, func(t *testing.T) {
				if kind == "postgres" && os.Getenv("TEST_POSTGRES_URL") == "" {
					t.Skip("no TEST_POSTGRES_URL")
				}
				realKillEveryPoint(t, kind, wf)
			})
		}
	}
}

func killDataDir(t *testing.T, kind string) string {
	dir := t.TempDir()
	if kind == "postgres" {
		url := os.Getenv("TEST_POSTGRES_URL")
		schema := fmt.Sprintf("killpt_%d_%d", os.Getpid(), rand.Uint32())
		if err := os.WriteFile(filepath.Join(dir, "schema"), []byte(schema), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
	}
	return dir
}

func realKillEveryPoint(t *testing.T, kind, wf string) {
	ctx := context.Background()
	// Clean run: points and reference output.
	dir := killDataDir(t, kind)
	st, err := openKind(ctx, kind, dir)
	if err != nil {
		t.Fatal(err)
	}
	probe := Wrap(st, -1, Before)
	rt := newRuntime(t, probe, func(string) {})
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: "crash-run"}); err != nil {
		t.Fatal(err)
	}
	want, err := drive(ctx, rt, "crash-run")
	if err != nil || want.Status != durable.RunCompleted {
		t.Fatalf("clean run: %v", err)
	}
	points := probe.Calls()
	_ = st.Close()
	if points == 0 {
		t.Fatal("no persistence point")
	}
	phases := []Phase{Before, After}
	if !store.IsAtomic(st) {
		phases = append(phases, Between)
	}
	for point := range points {
		for _, phase := range phases {
			t.Run(fmt.Sprintf("kill-%02d-%s", point, phase), func(t *testing.T) {
				checkRealKillAt(t, kind, wf, point, phase, want)
			})
		}
	}
}

func checkRealKillAt(t *testing.T, kind, wf string, point int, phase Phase, want *durable.RunState) {
	ctx := context.Background()
	dir := killDataDir(t, kind)
	if !spawnKilledLife(t, kind, dir, wf, "", point, phase) {
		t.Fatalf("child life (kill %d %s): the kill never happened", point, phase)
	}

	st, err := openKind(ctx, kind, dir)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer st.Close()
	counts := effectCounts(t, dir)
	durableDone := map[string]int{}
	for _, id := range allRuns(ctx, t, st) {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
				durableDone[r.IdempotencyKey] = counts[r.IdempotencyKey]
			}
		}
	}
	logEffect, err := effectLogger(dir)
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, st, logEffect)
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: "crash-run"}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	got, err := drive(ctx, rt, "crash-run")
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got.Status != want.Status || !reflect.DeepEqual(normalize(got.Output), normalize(want.Output)) {
		t.Fatalf("after restart: %s %v, want %s %v", got.Status, got.Output, want.Status, want.Output)
	}
	after := effectCounts(t, dir)
	for k, n := range durableDone {
		if after[k] != n {
			t.Errorf("effect %s re-executed after its completion was durable (%d → %d)", k, n, after[k])
		}
	}
	reruns := 0
	for _, n := range after {
		reruns += n - 1
	}
	if reruns > 1 {
		t.Errorf("%d repeated executions for one kill: %v", reruns, after)
	}
	for _, id := range runIDs(ctx, t, st, "crash-run") {
		checkLedgerEndsOnce(ctx, t, st, id)
		checkOneCharge(ctx, t, st, id)
	}
}

// claimsPointChildMain is the child life of the claims/artifacts
// scenarios over an on-disk artifact store (artifact.FS), optionally the
// offload+hashchain stack: SIGKILL right after the kill point.
func claimsPointChildMain() int {
	ctx := context.Background()
	c, err := openPointChild(ctx)
	if err != nil {
		return childFail(err)
	}
	arts, err := artifact.NewFS(c.dir)
	if err != nil {
		return childFail(err)
	}
	killer := Wrap(c.st, c.point, c.phase)
	killArts := WrapArtifacts(arts, killer)
	_, _ = claimsLife(ctx, stackDecorate(os.Getenv(pointEnvStack))(killer, killArts), killArts, 1, c.wf, "crash-run", c.logEffect)
	if !killer.Dead() {
		return childFail(fmt.Errorf("kill at %d never happened", c.point))
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func stackDecorate(stack string) Decorate {
	if stack == "offload" {
		return offloadStack
	}
	return func(st store.Store, _ artifact.Store) store.Store { return st }
}

func TestRealKillEveryPointClaims(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "json_fsync", "postgres"} {
		for _, stack := range []string{"bare", "offload"} {
			for _, wf := range []string{"crash_noter"} {
				t.Run(kind+"/"+stack+"/"+wf, func(t *testing.T) {
					if kind == "postgres" && os.Getenv("TEST_POSTGRES_URL") == "" {
						t.Skip("no TEST_POSTGRES_URL")
					}
					realKillEveryPointClaims(t, kind, stack, wf)
				})
			}
		}
	}
}

func realKillEveryPointClaims(t *testing.T, kind, stack, wf string) {
	ctx := context.Background()
	dir := killDataDir(t, kind)
	st, err := openKind(ctx, kind, dir)
	if err != nil {
		t.Fatal(err)
	}
	arts, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	probe := Wrap(st, -1, Before)
	probeArts := WrapArtifacts(arts, probe)
	want, err := claimsLife(ctx, stackDecorate(stack)(probe, probeArts), probeArts, 1, wf, "crash-run", func(string) {})
	if err != nil || want.Status != durable.RunCompleted {
		t.Fatalf("clean run: %v", err)
	}
	kinds := probe.Kinds()
	_ = st.Close()
	for point, k := range kinds {
		phases := []Phase{Before, After}
		if k == "commit" && !store.IsAtomic(st) {
			phases = append(phases, Between)
		}
		for _, phase := range phases {
			t.Run(fmt.Sprintf("kill-%02d-%s-%s", point, k, phase), func(t *testing.T) {
				dir := killDataDir(t, kind)
				if !spawnKilledLife(t, kind, dir, wf, stack, point, phase) {
					t.Fatalf("child life (kill %d %s): the kill never happened", point, phase)
				}
				st, err := openKind(ctx, kind, dir)
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				defer st.Close()
				arts, err := artifact.NewFS(dir)
				if err != nil {
					t.Fatalf("reopen artifacts: %v", err)
				}
				counts := effectCounts(t, dir)
				durableDone := map[string]int{}
				for _, id := range allRuns(ctx, t, st) {
					recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
					for _, r := range recs {
						if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
							durableDone[r.IdempotencyKey] = counts[r.IdempotencyKey]
						}
					}
				}
				logEffect, err := effectLogger(dir)
				if err != nil {
					t.Fatal(err)
				}
				got, err := claimsLife(ctx, stackDecorate(stack)(st, arts), arts, 2, wf, "crash-run", logEffect)
				if err != nil {
					t.Fatalf("after restart: %v", err)
				}
				if got.Status != want.Status || !reflect.DeepEqual(normalize(got.Output), normalize(want.Output)) {
					t.Fatalf("after restart: %s %v, want %s %v", got.Status, got.Output, want.Status, want.Output)
				}
				after := effectCounts(t, dir)
				for k, n := range durableDone {
					if after[k] != n {
						t.Errorf("effect %s re-executed after its completion was durable (%d → %d)", k, n, after[k])
					}
				}
				for _, id := range runIDs(ctx, t, st, "crash-run") {
					checkLedgerEndsOnce(ctx, t, st, id)
					checkOneCharge(ctx, t, st, id)
				}
				owner, err := st.RunGet(ctx, runtime.SessionMemoryRunID(noterSession))
				if err != nil {
					t.Fatalf("session memory owner: %v", err)
				}
				if n := len(memorySpans(owner)); n != 1 {
					t.Errorf("session memory owner holds %d spans, want 1", n)
				}
				checkNoDanglingRefs(ctx, t, st, arts)
			})
		}
	}
}

// spawnKilledLife runs one child life on dir killed at point/phase (stack,
// when not "", names the claims scenarios' decorator stack); it reports
// whether the kill happened (false: the life ended without reaching it).
func spawnKilledLife(t *testing.T, kind, dir, wf, stack string, point int, phase Phase) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), pointEnvKind+"="+kind, pointEnvDir+"="+dir, pointEnvPoint+"="+strconv.Itoa(point),
		pointEnvPhase+"="+strconv.Itoa(int(phase)), pointEnvWF+"="+wf)
	if stack != "" {
		cmd.Env = append(cmd.Env, pointEnvStack+"="+stack)
	}
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if ok && ee.ExitCode() == -1 {
		return true
	}
	if ok && ee.ExitCode() == 2 && strings.Contains(string(out), "never happened") {
		return false
	}
	t.Fatalf("child life (kill %d %s): %v\n%s", point, phase, err, out)
	return false
}

// TestRealDoubleKill kills a real process at point p of the first
// life, then the recovering process at every point q of the second life,
// then finishes in process: a kill during recovery.
func TestRealDoubleKill(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"json_fsync", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			wf := "crash_parent"
			want := referenceOutputs(t)[wf]
			for p := 0; ; p++ {
				base := t.TempDir()
				if !spawnKilledLife(t, kind, base, wf, "", p, doubleKillPhase(kind)) {
					break
				}
				for q := 0; ; q++ {
					dir := t.TempDir()
					if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
						t.Fatal(err)
					}
					if !spawnKilledLife(t, kind, dir, wf, "", q, doubleKillPhase(kind)) {
						t.Logf("p%d: %d second-life points", p, q)
						break
					}
					func() {
						st, err := openKind(ctx, kind, dir)
						if err != nil {
							t.Fatalf("p%d q%d: reopen: %v", p, q, err)
						}
						defer st.Close()
						logEffect, err := effectLogger(dir)
						if err != nil {
							t.Fatal(err)
						}
						rt := newRuntime(t, st, logEffect)
						if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: "crash-run"}); err != nil {
							t.Fatalf("p%d q%d: restart: %v", p, q, err)
						}
						got, err := drive(ctx, rt, "crash-run")
						if err != nil {
							t.Fatalf("p%d q%d: after restart: %v", p, q, err)
						}
						if got.Status != durable.RunCompleted || !reflect.DeepEqual(normalize(got.Output), normalize(want)) {
							t.Errorf("p%d q%d: %s %v, want %v", p, q, got.Status, got.Output, want)
						}
						for _, id := range runIDs(ctx, t, st, "crash-run") {
							recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
							terminal := 0
							for _, r := range recs {
								if r.IdempotencyKey == "system:terminal_status:completed" {
									terminal++
								}
							}
							if terminal != 1 {
								t.Errorf("p%d q%d: run %s: %d terminal records", p, q, id, terminal)
							}
							checkOneCharge(ctx, t, st, id)
						}
					}()
				}
			}
		})
	}
}

func doubleKillPhase(kind string) Phase {
	if kind == "json_fsync" {
		return Between
	}
	return After
}
