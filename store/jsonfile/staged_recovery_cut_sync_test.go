package jsonfile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// envTracedOpenDir names a data directory a copy of the test binary opens
// (and closes) in init, for TestStagedRecoveryCutIsDurableBeforeTheStagedNameGoes.
const envTracedOpenDir = "JSONFILE_TEST_TRACED_OPEN_DIR"

func init() {
	dir := os.Getenv(envTracedOpenDir)
	if dir == "" {
		return
	}
	st, err := New(Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	_ = st.Close()
	os.Exit(0)
}

// TestStagedRecoveryCutIsDurableBeforeTheStagedNameGoes: the recovery of
// a terminal commit whose records only partly landed ("a power loss
// mid-append", staged.go) cuts them off the ledger with os.Truncate and
// then removes the staged name, and syncs the directory, so the removal
// survives a power loss; but nothing ever syncs the ledger after the cut.
// A second power loss before the kernel writes the ledger's new size back
// (on file systems that do not commit an inode's truncation with the
// directory's sync) brings the partial records back with no staged name
// left to judge them: the torn part of an end that never happened is then
// read as the ledger's records. The store's own undo of a failed commit
// does it in the safe order (cutLedger: truncate, fsync, then drop the
// staged file: "so that a kill in between leaves a staged name the next
// open drops too"). Observed with strace on a child process that opens
// the directory: between the truncate and the unlink of the staged name
// there must be an fsync of the ledger.
func TestStagedRecoveryCutIsDurableBeforeTheStagedNameGoes(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed")
	}
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runFile := `{"run_id": "r1", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {}}`
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	write("run_r1.json", runFile)
	write("ledger_r1.jsonl", first+records[:10]) // a torn part of the append
	write(stagedNameWithContent("r1", int64(len(first)), []byte(records), int64(len(runFile)), appendSum([]byte(runFile))),
		`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "a", "vars": {}}`)

	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-y", "-qq", "-o", trace, "-e", "trace=openat,truncate,ftruncate,fsync,fdatasync,unlink,unlinkat,rename,renameat,renameat2",
		os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTracedOpenDir+"="+dir, "GOMAXPROCS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot trace a child here: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "ledger_r1.jsonl")); err != nil || fi.Size() != int64(len(first)) {
		t.Fatalf("precondition: the child did not cut the partial append (%v, %v)", fi, err)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	// strace -y prints the path of each descriptor argument.
	cut, gone, synced := -1, -1, false
	for i, l := range lines {
		ledger := strings.Contains(l, "ledger_r1.jsonl")
		switch {
		case cut < 0 && ledger && strings.Contains(l, "truncate("):
			cut = i
		case cut >= 0 && ledger && (strings.Contains(l, "fsync(") || strings.Contains(l, "fdatasync(")):
			synced = true
		case cut >= 0 && strings.Contains(l, "unlink") && strings.Contains(l, ".commit-r1."):
			gone = i
		}
		if gone >= 0 {
			break
		}
	}
	if cut < 0 || gone < 0 {
		t.Fatalf("precondition: the trace shows no cut of the ledger (%d) or removal of the staged name (%d):\n%s", cut, gone, data)
	}
	if !synced {
		t.Errorf("the recovery removed the staged name without syncing the ledger it cut; the trace from the cut to the removal:\n%s",
			strings.Join(lines[cut:gone+1], "\n"))
	}
}
