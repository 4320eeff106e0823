//go:build linux

package jsonfile

import (
	"os"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// unsyncableOnce makes the store's next append write its bytes to the
// file, then puts a pipe's write end in place of the file's descriptor:
// the fsync that must follow fails (a pipe cannot be synced: EINVAL), as
// on a disk that fails to flush. Nothing else about the append changes,
// so with NoSync (no fsync) the append still succeeds.
func unsyncableOnce(t *testing.T, s *Store) {
	t.Helper()
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		n, err := f.Write(data)
		if err != nil {
			return n, err
		}
		var p [2]int
		if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
			t.Errorf("pipe: %v", err)
			return n, nil
		}
		defer func() { _ = syscall.Close(p[0]); _ = syscall.Close(p[1]) }()
		rc, err := f.SyscallConn()
		if err != nil {
			t.Errorf("syscall conn: %v", err)
			return n, nil
		}
		var derr error
		if err := rc.Control(func(fd uintptr) { derr = syscall.Dup3(p[1], int(fd), syscall.O_CLOEXEC) }); err != nil || derr != nil {
			t.Errorf("dup3: %v %v", err, derr)
		}
		return n, nil
	}
}

// TestAppendsReportAFailedFsync: with syncing on (the default: "every
// write is synced before it returns"), a ledger append, a commit's
// records and a command append are synced before they are acknowledged,
// and one whose fsync fails is reported failed (the commit leaving the
// run's state as it was). With NoSync the same appends succeed: the
// fsync is what fails them. Kills the mutation that skips the f.Sync()
// of appendFile (store/jsonfile/commands.go), which no other test sees
// (a process kill loses nothing an fsync would have kept).
func TestAppendsReportAFailedFsync(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		name := "synced"
		if noSync {
			name = "NoSync"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := openInternalSync(t, t.TempDir(), noSync)
			run := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{"tag": "old"}}
			if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true,
				Records: []*durable.StepRecord{{RunID: "r1", StepID: "s0", NodeID: "n", Status: durable.StepCompleted}}}); err != nil {
				t.Fatal(err)
			}
			wantErr := func(what string, err error) {
				t.Helper()
				switch {
				case !noSync && err == nil:
					t.Errorf("%s whose fsync failed reported success", what)
				case noSync && err != nil:
					t.Errorf("%s with NoSync: %v", what, err)
				}
			}

			unsyncableOnce(t, s)
			wantErr("a ledger append", s.LedgerAppend(ctx, "r1",
				[]*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted}}))

			version := run.Version
			next := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{"tag": "new"}, Version: version}
			unsyncableOnce(t, s)
			wantErr("a commit", s.RunCommit(ctx, &store.CommitParams{Run: next,
				Records: []*durable.StepRecord{{RunID: "r1", StepID: "s2", NodeID: "n", Status: durable.StepCompleted}}}))
			if !noSync {
				got, err := s.RunGet(ctx, "r1")
				if err != nil {
					t.Fatal(err)
				}
				if got.Version != version || got.Vars["tag"] != "old" {
					t.Errorf("after a commit whose records' fsync failed the run is %q at version %d; want %q at %d",
						got.Vars["tag"], got.Version, "old", version)
				}
			}

			unsyncableOnce(t, s)
			_, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
			wantErr("a command append", err)
		})
	}
}
