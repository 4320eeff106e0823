package jsonfile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// The child process of TestTerminalCommitKilled: it runs one scenario on
// the store in envStagedDir and kills itself at the commit point named
// by envStagedKillAt. It runs from init, before the tests, and never
// returns.
const (
	envStagedKillAt   = "JSONFILE_TEST_STAGED_KILL_AT"
	envStagedDir      = "JSONFILE_TEST_STAGED_DIR"
	envStagedScenario = "JSONFILE_TEST_STAGED_SCENARIO"
)

func init() {
	point := os.Getenv(envStagedKillAt)
	if point == "" {
		return
	}
	err := stagedChild(os.Getenv(envStagedDir), os.Getenv(envStagedScenario), point)
	fmt.Fprintf(os.Stderr, "child: the kill point %q was not reached: %v\n", point, err)
	os.Exit(3)
}

func stagedChild(dir, scenario, point string) error {
	st, err := New(Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	rt, err := askRuntime(st)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", RunID: "r1"}); err != nil {
		return err
	}
	if _, err := rt.Tick(ctx, "r1", runtime.TickOptions{}); err != nil {
		return err
	}
	st.killForTest = func(p string) {
		if p == point {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	switch scenario {
	case "answer":
		_, err = rt.Resume(ctx, runtime.ResumeParams{RunID: "r1", Payload: map[string]any{"text": "yes"}})
	case "cancel":
		_, err = rt.Cancel(ctx, "r1", "")
	default:
		err = fmt.Errorf("unknown scenario %q", scenario)
	}
	return err
}

// askRuntime runs "ask": ASK_USER into vars.answer, then complete with
// {"answer": answer.text}.
func askRuntime(st *Store) (*runtime.Runtime, error) {
	wf := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Continue?"}, ResultKey: "answer"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			ans, _ := run.Vars["answer"].(map[string]any)
			return runtime.Complete(map[string]any{"answer": ans["text"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		return nil, err
	}
	return runtime.New(runtime.Config{Store: st, Registry: reg})
}

// TestTerminalCommitKilled: a process killed inside a terminal commit,
// after its records landed in the ledger and before the state was saved,
// used to leave the run at its last checkpoint; what happened next then
// ended it a second way, with a second terminal record of another status
// (docs/architecture.md). The run is now as the commit left it: the next
// open finishes a commit whose records landed and drops one whose records
// did not, and whatever comes next sees one outcome.
func TestTerminalCommitKilled(t *testing.T) {
	cases := []struct {
		scenario, point string
		want            durable.RunStatus // after the reopen and the other request
	}{
		{"answer", "appended", durable.RunCompleted}, // the cancel that follows finds it completed
		{"answer", "staged", durable.RunCancelled},   // the answer never happened: the cancel wins
		{"cancel", "appended", durable.RunCancelled}, // the answer that follows is stale
		{"cancel", "staged", durable.RunCompleted},   // the cancel never happened: the answer completes it
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.point, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envStagedKillAt+"="+c.point, envStagedDir+"="+dir, envStagedScenario+"="+c.scenario)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %q: %v\n%s", c.point, err, out)
			}
			st := openInternalSync(t, dir, false)
			rt, err := askRuntime(st)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
				t.Errorf("staged files left after the reopen: %v", left)
			}
			// The request the killed process did not get to make.
			if c.scenario == "answer" {
				_, err = rt.Cancel(ctx, "r1", "")
			} else {
				_, err = rt.Resume(ctx, runtime.ResumeParams{RunID: "r1", Payload: map[string]any{"text": "yes"}})
				var stale *runtime.StaleResumeError
				if c.want == durable.RunCancelled && errors.As(err, &stale) {
					err = nil // the answer came after the cancel: refused
				}
			}
			if err != nil {
				t.Fatalf("after the reopen: %v", err)
			}
			run, err := rt.GetState(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			ledger, err := rt.GetLedger(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			var terminal []string
			for _, r := range ledger {
				if k, ok := strings.CutPrefix(r.IdempotencyKey, "system:terminal_status:"); ok {
					terminal = append(terminal, k)
				}
			}
			if run.Status != c.want || len(terminal) != 1 || terminal[0] != string(c.want) {
				t.Errorf("run %s with terminal records %v; want %s with one terminal record of that status", run.Status, terminal, c.want)
			}
			if c.want == durable.RunCompleted && run.Output["answer"] != "yes" {
				t.Errorf("output %v, want answer yes", run.Output)
			}
		})
	}
}

// TestRecoverStagedStates: the three states a staged commit can be found
// in at open, made by hand: records partly appended (cut off, staged
// dropped), records whole (staged put in place), and a staged name left
// after the commit finished (holding the state it displaced: dropped).
func TestRecoverStagedStates(t *testing.T) {
	waiting := []byte(`{"run_id": "r1", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {}}`)
	done := []byte(`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "a", "vars": {}, "output": {"ok": true}}`)
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	before, after := int64(len(first)), int64(len(first)+len(records))
	cases := []struct {
		name         string
		runFile      []byte
		ledger       string
		staged       []byte
		wantStatus   durable.RunStatus
		wantLedgerSz int64
	}{
		{"partial", waiting, first + records[:10], done, durable.RunWaiting, before},
		{"none", waiting, first, done, durable.RunWaiting, before},
		{"landed", waiting, first + records, done, durable.RunCompleted, after},
		{"finished", done, first + records, waiting, durable.RunCompleted, after},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name string, data []byte) {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("run_r1.json", c.runFile)
			write("ledger_r1.jsonl", []byte(c.ledger))
			write(stagedName("r1", before, []byte(records)), c.staged)
			write(".commit-nonsense.tmp", []byte("x"))
			st := openInternal(t, dir)
			run, err := st.RunGet(context.Background(), "r1")
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(dir, "ledger_r1.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != c.wantStatus || fi.Size() != c.wantLedgerSz {
				t.Errorf("run %s, ledger %d bytes; want %s, %d bytes", run.Status, fi.Size(), c.wantStatus, c.wantLedgerSz)
			}
			if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
				t.Errorf("staged files left: %v", left)
			}
		})
	}
}

func TestStagedNameRoundTrip(t *testing.T) {
	appended := []byte("records\n")
	for _, id := range []string{"r1", "a.b-c.1-2", "8d0b8f5e-6c1c-4b8e-9a53-3f1e2d7c9b10"} {
		c, ok := parseStagedName(stagedName(id, 12, appended))
		if want := (stagedCommit{id, 12, 12 + int64(len(appended)), appendSum(appended)}); !ok || c != want {
			t.Errorf("%q: read back %+v %v, want %+v", id, c, ok, want)
		}
	}
	for _, bad := range []string{".commit-.1-2-a.tmp", ".commit-r1.2-1-a.tmp", ".commit-r1.x-2-a.tmp", ".commit-r1.1-2.tmp",
		".commit-r1.1-2-zz.tmp", ".spare-r1.1-2-a.tmp", ".commit-r1.1-2-a"} {
		if _, ok := parseStagedName(bad); ok {
			t.Errorf("%q read as a staged name", bad)
		}
	}
}

// TestTerminalCommitLongIDUnstaged: a run id too long for a staged name
// (the file name limit) is committed the unstaged way, and commits. Our
// creates cannot make such a run (their temp name is longer still), but
// Python's can.
func TestTerminalCommitLongIDUnstaged(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	id := strings.Repeat("r", 240)
	file := `{"run_id": "` + id + `", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {}}`
	if err := os.WriteFile(filepath.Join(dir, "run_"+id+".json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openInternal(t, dir)
	run, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(stagedName(id, 0, make([]byte, 100))) <= maxNameLen {
		t.Fatal("precondition: the id fits a staged name")
	}
	staged := 0
	st.killForTest = func(p string) {
		if p == "staged" {
			staged++
		}
	}
	run.Status = durable.RunCompleted
	rec := &durable.StepRecord{RunID: id, StepID: "s1", NodeID: "a", Status: durable.StepCompleted}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.RunGet(ctx, id)
	if err != nil || got.Status != durable.RunCompleted || staged != 0 {
		t.Fatalf("run %v (%v), staged %d times; want completed, unstaged", got, err, staged)
	}
	if n, _ := st.LedgerCount(ctx, id); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
}

// TestTerminalCommitStagesOnce: an ordinary terminal commit goes through
// the staged name (the point is reached), a non-terminal one does not.
func TestTerminalCommitStagesOnce(t *testing.T) {
	st := openInternal(t, t.TempDir())
	ctx := context.Background()
	run := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	var points []string
	st.killForTest = func(p string) { points = append(points, p) }
	commit := func(status durable.RunStatus, step string) {
		t.Helper()
		run.Status = status
		rec := &durable.StepRecord{RunID: "r1", StepID: step, NodeID: "a", Status: durable.StepCompleted}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{rec}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(durable.RunWaiting, "s1")
	if !slices.Equal(points, []string{"appended"}) {
		t.Fatalf("a non-terminal commit passed %v", points)
	}
	points = nil
	commit(durable.RunFailed, "s2")
	if !slices.Equal(points, []string{"staged", "appended"}) {
		t.Fatalf("a terminal commit passed %v, want staged then appended", points)
	}
	got, err := st.RunGet(ctx, "r1")
	if err != nil || got.Status != durable.RunFailed {
		t.Fatalf("run %v (%v)", got, err)
	}
}
