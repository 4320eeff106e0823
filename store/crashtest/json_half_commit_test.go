package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// runFileKeeper sits under the killable Store, over a JSON store in dir:
// before each commit of an existing run it keeps the run's file as it
// was, so that a test can put it back and leave on disk what a process
// dying between the commit's ledger append and its state write leaves.
type runFileKeeper struct {
	store.Wrapper
	dir  string
	id   string
	data []byte // the run file before the last commit; nil for a create
}

// RunCommit keeps the run file, then commits.
func (k *runFileKeeper) RunCommit(ctx context.Context, p *store.CommitParams) error {
	k.id, k.data = p.Run.RunID, nil
	if !p.Create {
		data, err := os.ReadFile(filepath.Join(k.dir, "run_"+p.Run.RunID+".json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keeping the run file of %s: %w", p.Run.RunID, err)
		}
		k.data = data
	}
	return k.Wrapper.RunCommit(ctx, p)
}

// TestCrashJSONFileHalfCommitOnDisk kills Run's scenarios on the JSON
// store after each commit of an existing run and puts the run's file back
// as it was before it: the ledger holds the commit's records, the state
// does not, as a real death between the two writes leaves it. The
// harness's Between phase makes that state through LedgerAppend, and only
// for a store that says it does not commit atomically; this one makes it
// on disk, whatever the store says, so that a JSON store taken for atomic
// (the kernel then skipping its replay checks) is caught.
func TestCrashJSONFileHalfCommitOnDisk(t *testing.T) {
	t.Parallel()
	for _, wf := range scenarios {
		t.Run(wf, func(t *testing.T) { jsonHalfCommits(t, wf) })
	}
}

func jsonHalfCommits(t *testing.T, workflowID string) {
	ctx := context.Background()
	const runID = "crash-run"
	openIn := func(t *testing.T, dir string) (store.Store, func()) {
		st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return st, func() { st.Close() }
	}
	dir := t.TempDir()
	st, closeFn := openIn(t, dir)
	log := &effectLog{calls: map[string]int{}}
	probe := Wrap(st, -1, Before)
	want, err := driveLife(ctx, t, probe, workflowID, runID, log)
	if err != nil {
		t.Fatalf("clean run: %v", err)
	}
	children := len(runIDs(ctx, t, st, runID)) - 1
	kinds := probe.Kinds()
	closeFn()
	for point, kind := range kinds {
		if kind != "commit" {
			continue
		}
		t.Run(fmt.Sprintf("kill-%02d", point), func(t *testing.T) {
			dir := t.TempDir()
			log := &effectLog{calls: map[string]int{}}
			st, closeFn := openIn(t, dir)
			keeper := &runFileKeeper{Wrapper: store.Wrapper{Store: st}, dir: dir}
			killer := Wrap(keeper, point, After)
			_, _ = driveLife(ctx, t, killer, workflowID, runID, log)
			if !killer.Dead() {
				t.Fatalf("the kill at point %d never happened", point)
			}
			closeFn()
			if keeper.data == nil {
				t.Skip("a create: no state to put back")
			}
			if err := os.WriteFile(filepath.Join(dir, "run_"+keeper.id+".json"), keeper.data, 0o600); err != nil {
				t.Fatal(err)
			}
			atKill := checkOncePerLife(t, "life before the kill", log, nil)

			st, closeFn = openIn(t, dir)
			defer closeFn()
			done := durableEffects(ctx, t, st, runIDs(ctx, t, st, runID), log)
			got, err := driveLife(ctx, t, st, workflowID, runID, log)
			if err != nil {
				t.Fatalf("after restart: %v", err)
			}
			checkRestarted(ctx, t, st, runID, got, want, children, done, log)
			checkOncePerLife(t, "life after the restart", log, atKill)
		})
	}
}

// driveLife starts (or finds) the run over st and drives it to its end.
func driveLife(ctx context.Context, t *testing.T, st store.Store, workflowID, runID string, log *effectLog) (*durable.RunState, error) {
	rt := newRuntime(t, st, log.add)
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, RunID: runID}); err != nil {
		return nil, err
	}
	return drive(ctx, rt, runID)
}
