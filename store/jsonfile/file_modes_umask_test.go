//go:build unix

package jsonfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestFilesFollowTheUmaskAsPythonsDo: in a group-shared data directory
// (setgid, every user with umask 002), Python's stores create their files
// with open("w") / open("a"), mode 0666 under the umask: 0664, so that
// every member of the group may write them, and the directory with
// mkdir(parents=True), 0777 under the umask: 0775. Ours create every file
// with 0644 under the umask (appendFile's OpenFile, atomicfile's default
// Perm, the Recycler's spares that become the run files and cursors) and
// the directory with 0755, so what our store creates there is not
// group-writable: a Python gateway (or API worker) running as another
// member of the group then fails with PermissionError appending a command
// to commands.jsonl or a record to a ledger our store created (and cannot
// create any file in a data dir New created). The package promises a data
// directory that "can be shared with (or migrated from) the Python
// AbstractGateway"; atomicfile's own test calls 0o644 "the mode Python's
// files get", which holds only under umask 022.
func TestFilesFollowTheUmaskAsPythonsDo(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data") // created by New, as Python's mkdir(parents=True) would
	st := openInternal(t, dir)
	ctx := t.Context()
	if fi, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	} else if got, want := fi.Mode().Perm(), os.FileMode(0o775); got != want {
		t.Errorf("the data dir New created: mode %v under umask 002, want %v (0777 under the umask, as Python's mkdir gives): no other member of the group may create a file in it", got, want)
	}
	run := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	run.Vars["n"] = 1
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepCompleted}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause", Payload: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CursorSave(ctx, store.DefaultConsumer, 1); err != nil {
		t.Fatal(err)
	}
	// gateway_runner.lock too: a Python runner of another member of the
	// group appends its pid line to it (spec gateway-api §8.2).
	for _, name := range []string{"run_r1.json", "ledger_r1.jsonl", "commands.jsonl", "commands_cursor.json", "gateway_runner.lock"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o664); got != want {
			t.Errorf("%s: mode %v under umask 002, want %v (0666 under the umask, as Python's open() gives)", name, got, want)
		}
	}
}
