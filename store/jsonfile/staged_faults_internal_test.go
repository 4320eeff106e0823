package jsonfile

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// terminalStatuses lists the statuses of the terminal records in a run's
// ledger.
func terminalStatuses(t *testing.T, st *Store, id string) []string {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if k, ok := strings.CutPrefix(r.IdempotencyKey, "system:terminal_status:"); ok {
			out = append(out, k)
		}
	}
	return out
}

// TestStagedRecoveryLedgerGrownByPython: a process killed at
// "staged" (the cancel's state staged, none of its records appended)
// leaves the staged file. A Python process on the same data dir (the
// docs say Python ignores the staged name, and the CLI opens a Python
// gateway's JSON dir) then continues the run: it appends its own records
// and saves a newer, non-terminal state. At our next open the recovery
// judges by the ledger's size alone: the ledger has reached the size in
// the staged name, so the stale cancelled state is put over Python's
// newer run file, although none of the cancel's records are in the
// ledger. The run ends cancelled with no terminal record, and the state
// Python saved is lost.
func TestStagedRecoveryLedgerGrownByPython(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envStagedKillAt+"=staged", envStagedDir+"="+dir, envStagedScenario+"=cancel")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed at staged: %v\n%s", err, out)
	}
	left, _ := atomicfile.Glob(dir, stagedPattern)
	if len(left) != 1 {
		t.Fatalf("precondition: one staged file, got %v", left)
	}
	c, ok := parseStagedName(filepath.Base(left[0]))
	after := c.after
	if !ok {
		t.Fatalf("precondition: %s does not parse", left[0])
	}

	// What a Python process does on the directory meanwhile (it takes no
	// lock and ignores hidden files): appends step records of its own and
	// saves the run, still waiting, with a change of its own.
	ledger := filepath.Join(dir, "ledger_r1.jsonl")
	f, err := os.OpenFile(ledger, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= after {
			break
		}
		line := `{"run_id": "r1", "step_id": "py-` + string(rune('a'+i)) + `", "node_id": "ask", "status": "started", "effect": null, "result": null, "error": null}` + "\n"
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	_ = f.Close()
	runPath := filepath.Join(dir, "run_r1.json")
	data, err := os.ReadFile(runPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"status": "waiting"`) {
		t.Fatalf("precondition: the run file is not waiting:\n%s", data)
	}
	data = []byte(strings.Replace(string(data), `"vars": {`, `"vars": {"python_was_here": true, `, 1))
	if err := os.WriteFile(runPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ledgerBefore, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}

	st := openInternal(t, dir)
	run, err := st.RunGet(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	terminal := terminalStatuses(t, st, "r1")
	ledgerAfter, _ := os.ReadFile(ledger)
	if run.Status != durable.RunWaiting || run.Vars["python_was_here"] != true {
		t.Errorf("after the reopen the run is %s (python_was_here=%v), with terminal records %v: the staged cancel, whose records never landed, replaced the newer state Python saved",
			run.Status, run.Vars["python_was_here"], terminal)
	}
	if run.Status.Terminal() && len(terminal) == 0 {
		t.Errorf("the run is %s with no terminal record in its ledger", run.Status)
	}
	if string(ledgerAfter) != string(ledgerBefore) {
		t.Errorf("the ledger changed at open: %d bytes, was %d", len(ledgerAfter), len(ledgerBefore))
	}
}

// exhaustFDsAfterNextWrite lets st's next file write through, then
// refuses every new file descriptor (exhaustFDsAfter on the written file)
// until giveBack runs; giveBack may run more than once, and before the
// write.
func exhaustFDsAfterNextWrite(t *testing.T, st *Store) (giveBack func()) {
	t.Helper()
	var undo func()
	st.writeForTest = func(f *os.File, data []byte) (int, error) {
		st.writeForTest = nil
		n, err := f.Write(data)
		undo = exhaustFDsAfter(t, f)
		return n, err
	}
	return func() {
		if undo != nil {
			undo()
			undo = nil
		}
	}
}

// exhaustFDsAfter makes every open of a new file descriptor fail (EMFILE)
// once the descriptor f is closed, and returns what undoes it.
func exhaustFDsAfter(t *testing.T, f *os.File) (undo func()) {
	t.Helper()
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	lim := saved
	lim.Cur = uint64(f.Fd()) // the lowest free descriptor after f closes is f's: refused
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var fillers []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fillers = append(fillers, fd)
	}
	return func() {
		for _, fd := range fillers {
			_ = syscall.Close(fd)
		}
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved)
	}
}

// stagedFaultSetup creates r1 (running, no records) in a synced store and
// returns the store and the run at its stored version.
func stagedFaultSetup(t *testing.T, dir string) (*Store, *durable.RunState) {
	t.Helper()
	st := openInternalSync(t, dir, false)
	run := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{}}
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	return st, run
}

func terminalRecordOf() *durable.StepRecord {
	return &durable.StepRecord{RunID: "r1", StepID: "end", NodeID: "a", Status: durable.StepCompleted,
		IdempotencyKey: "system:terminal_status:completed"}
}

// checkAllOrNothing reopens dir and checks the run is either
// completed with the terminal record or running without it.
func checkAllOrNothing(t *testing.T, dir string, commitErr error) {
	t.Helper()
	st := openInternal(t, dir)
	run, err := st.RunGet(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	terminal := terminalStatuses(t, st, "r1")
	switch {
	case run.Status == durable.RunCompleted && len(terminal) == 1:
	case run.Status == durable.RunRunning && len(terminal) == 0:
	default:
		t.Errorf("after RunCommit returned %v and a reopen: run %s with terminal records %v; want completed with the record, or running without it",
			commitErr, run.Status, terminal)
	}
	if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
		t.Errorf("staged files left: %v", left)
	}
}

// commitTerminalDirSyncFailing creates r1 in a synced store on dir, then
// commits its end with every new file descriptor refused (EMFILE) from
// just after the append's write: the directory syncs that follow fail.
// It returns the store, the run as the committing caller holds it after,
// its version before the commit, and the commit's error.
func commitTerminalDirSyncFailing(t *testing.T, dir string) (_ *Store, run *durable.RunState, versionBefore int64, _ error) {
	t.Helper()
	st, run := stagedFaultSetup(t, dir)
	versionBefore = run.Version
	giveBack := exhaustFDsAfterNextWrite(t, st)
	run.Status = durable.RunCompleted
	err := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}})
	giveBack()
	return st, run, versionBefore, err
}

// TestStagedAppendDirSyncFails: the terminal commit's records are
// written and synced to a ledger the append created, then the directory
// sync that makes the new ledger's entry durable fails (here EMFILE, as a
// busy server runs into). appendFile returns the error with the records
// left in the file; RunCommit takes it for a failed append, unstages the
// terminal state and reports failure. The ledger now holds the terminal
// record of a run that did not end: the half-made end staging exists to
// prevent (a later, different end adds a second terminal record).
func TestStagedAppendDirSyncFails(t *testing.T) {
	dir := t.TempDir()
	st, _, _, commitErr := commitTerminalDirSyncFailing(t, dir)
	if commitErr == nil {
		t.Fatal("precondition: the directory sync did not fail")
	}
	t.Logf("RunCommit: %v", commitErr)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	checkAllOrNothing(t, dir, commitErr)
}

// symlinkRunFileWhenAppended makes the run file at runPath a symlink (to
// the file, moved aside to the path it returns) once a commit's records
// are appended: Promote then refuses to swap it out.
func symlinkRunFileWhenAppended(t *testing.T, st *Store, runPath string) (aside string) {
	aside = filepath.Join(t.TempDir(), filepath.Base(runPath))
	st.killForTest = func(p string) {
		if p != "appended" {
			return
		}
		if err := os.Rename(runPath, aside); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(aside, runPath); err != nil {
			t.Error(err)
		}
	}
	return aside
}

// TestStagedPromoteFails: the records landed, then Promote fails with
// the run file unchanged (here the run file has become a symlink, which
// Promote refuses to swap out). RunCommit returned the error but left the
// terminal records in the ledger without the terminal state; the records
// are now cut back off, as the staged name knew the ledger's size before
// them.
func TestStagedPromoteFails(t *testing.T) {
	dir := t.TempDir()
	st, run := stagedFaultSetup(t, dir)
	runPath := filepath.Join(dir, "run_r1.json")
	aside := symlinkRunFileWhenAppended(t, st, runPath)
	run.Status = durable.RunCompleted
	commitErr := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}})
	if commitErr == nil || !strings.Contains(commitErr.Error(), "not a regular file") {
		t.Fatalf("RunCommit: %v, want Promote's refusal", commitErr)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(runPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, runPath); err != nil {
		t.Fatal(err)
	}
	checkAllOrNothing(t, dir, commitErr) // the run file is the old one: running, no terminal record
}

// TestStagedPromoteFailureNotifiesNothing: when Promote fails and the
// commit is undone (its records cut back off the ledger), the records
// must lose the Seq the append gave them, as after an append that failed:
// observe takes a Seq to mean "in the ledger" and would otherwise notify
// subscribers of a terminal record the ledger does not hold.
func TestStagedPromoteFailureNotifiesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, run := stagedFaultSetup(t, dir)
	symlinkRunFileWhenAppended(t, st, filepath.Join(dir, "run_r1.json"))
	obs := observe.Wrap(st)
	sub := obs.Subscribe("", 16)
	defer sub.Cancel()

	run.Status = durable.RunCompleted
	terminal := terminalRecordOf()
	commitErr := obs.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminal}})
	if commitErr == nil || !strings.Contains(commitErr.Error(), "not a regular file") {
		t.Fatalf("RunCommit: %v, want Promote's refusal", commitErr)
	}
	st.killForTest = nil
	if terminal.Seq != 0 {
		t.Errorf("the undone record keeps seq %d; want 0 (not in the ledger)", terminal.Seq)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	inLedger := map[int64]string{}
	for _, r := range recs {
		inLedger[r.Seq] = r.IdempotencyKey
	}
	for done := false; !done; {
		select {
		case ev := <-sub.C:
			for _, r := range ev.Records {
				if key, ok := inLedger[r.Seq]; !ok || key != r.IdempotencyKey {
					t.Errorf("notified record seq %d (%s), which the undone commit cut off the ledger", r.Seq, r.IdempotencyKey)
				}
			}
		default:
			done = true
		}
	}
}

// TestStagedRecoverySymlinkedLedger: the recovery reads the
// ledger's size with Lstat, where every other ledger access (appendFile's
// open, the reads) follows a symlink. With ledger_r1.jsonl a symlink (a
// ledger kept on another disk), a process killed after the cancel's
// records landed is judged by the link's own size (its target path's
// length): the staged state is dropped although its records are in the
// ledger, so the run stays waiting with a cancelled terminal record.
func TestStagedRecoverySymlinkedLedger(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "ledger_r1.jsonl")
	if err := os.WriteFile(elsewhere, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "ledger_r1.jsonl")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envStagedKillAt+"=appended", envStagedDir+"="+dir, envStagedScenario+"=cancel")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed at appended: %v\n%s", err, out)
	}
	st := openInternal(t, dir)
	run, err := st.RunGet(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	terminal := terminalStatuses(t, st, "r1")
	if run.Status != durable.RunCancelled || len(terminal) != 1 {
		t.Errorf("after the reopen: run %s with terminal records %v; want cancelled with its one terminal record (they landed)", run.Status, terminal)
	}
}
