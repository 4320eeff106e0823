package jsonfile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// identityRec is a ledger record of step step of run id.
func identityRec(id string, step int, status durable.StepStatus, key string) *durable.StepRecord {
	now := durable.NewTime(time.Now())
	return &durable.StepRecord{RunID: id, StepID: fmt.Sprintf("%s-s%d", id, step), NodeID: "n",
		Status: status, StartedAt: now, EndedAt: now, IdempotencyKey: key, Attempt: 1,
		Result: map[string]any{"step": step}}
}

// identityRun is a run with fixed times, so that two states that differ only
// in the tag are of the same size.
func identityRun(id, tag string, status durable.RunStatus) *durable.RunState {
	now := durable.NewTime(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: status, CurrentNode: "start",
		Vars: map[string]any{"tag": tag}, CreatedAt: now, UpdatedAt: now}
}

// pythonSave writes a run file as Python's JsonFileRunStore.save does
// (spec §4.3: a run_<id>.json.<32 hex>.tmp temp file, then os.replace).
func pythonSave(t *testing.T, path string, r *durable.RunState) {
	t.Helper()
	b, err := durable.MarshalRun(r, pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".0123456789abcdef0123456789abcdef.tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestSameSizeRewriteInOneMtimeTickIsReadAgain: the cached state
// is "valid while the file keeps the same modification time and size"
// (cachedRun), and RunGet is meant to see a run file another process
// (Python, which takes no lock) rewrote: loadRunLocked adopts such files,
// and TestRewrittenRunFileIsReadAgain checks it. But file times are
// coarse: a new file gets the clock of the last tick (on this machine
// 200 of 200 rewrites 1 ms apart kept the mtime; a second on some file
// systems), and a run state often keeps its size (waiting -> running,
// same-length ids and times). Python replacing the run file within one
// tick with a state of the same size is then never read: RunGet serves
// the cached old state for as long as the file stays unchanged. The
// rewrite here replaces the file by rename (a new inode, a new ctime),
// which a check of the inode number or ctime would notice; the mtime is
// pinned to the old one to make the test independent of tick timing.
func TestSameSizeRewriteInOneMtimeTickIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	if err := s.RunCommit(ctx, &store.CommitParams{Run: identityRun("r1", "ours", durable.RunWaiting), Create: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RunGet(ctx, "r1"); err != nil || got.Vars["tag"] != "ours" {
		t.Fatalf("RunGet = %v, %v", got, err)
	}
	sameSizeSaveInOneTick(t, filepath.Join(dir, "run_r1.json"))
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vars["tag"] != "pyth" || got.Status != durable.RunRunning {
		t.Errorf("RunGet after another process replaced the run file within one mtime tick: %s, tag %v; want the file's running, tag pyth",
			got.Status, got.Vars["tag"])
	}
}

// killedHere stands for the end of the process at a commit's kill point.
type killedHere struct{}

// terminalCommitKilledAfterAppend creates r1 (running, one record) in a
// synced store on dir, calls beforeEnd, then ends it (completed, with its
// terminal record) and stops the commit at its "appended" point (calling
// atKill with the staged file's path there), leaving what a process
// killed there leaves: the staged state and the landed records. The store
// is then closed, which removes only what the next open would remove.
func terminalCommitKilledAfterAppend(t *testing.T, dir string, beforeEnd func(), atKill func(staged string)) {
	t.Helper()
	s, err := New(Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := identityRun("r1", "ours", durable.RunRunning)
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true,
		Records: []*durable.StepRecord{identityRec("r1", 1, durable.StepCompleted, "")}}); err != nil {
		t.Fatal(err)
	}
	beforeEnd()
	s.killForTest = func(p string) {
		if p == "appended" {
			left, _ := atomicfile.Glob(dir, stagedPattern)
			if len(left) != 1 {
				t.Fatalf("precondition: staged files %v at the kill point", left)
			}
			atKill(left[0])
			panic(killedHere{})
		}
	}
	r.Status = durable.RunCompleted
	func() {
		defer func() {
			if v := recover(); v != (killedHere{}) {
				panic(v)
			}
		}()
		_ = s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{
			identityRec("r1", 2, durable.StepCompleted, "system:terminal_status:completed")}})
		t.Fatal("the commit did not reach its appended point")
	}()
	_ = s.Close()
}

// reopenedTerminal reopens dir and returns the run and the number of its
// terminal records.
func reopenedTerminal(t *testing.T, dir string) (*durable.RunState, int) {
	t.Helper()
	s := openInternal(t, dir)
	r, err := s.RunGet(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.LedgerList(context.Background(), &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rec := range recs {
		if strings.HasPrefix(rec.IdempotencyKey, "system:terminal_status:") {
			n++
		}
	}
	return r, n
}

// TestStagedCommitFinishedAfterClockStepBack: a staged terminal
// commit "whose records all landed ... is put in place, finishing the
// commit ... so the run is either ended with its records or not ended at
// all" (docs/architecture.md, staged terminal commits). recoverStagedCommit
// instead drops it whenever the run file's mtime is after the staged
// file's (savedAfter), taking wall-clock order for "another process saved
// the run since". The wall clock is not monotonic: after it steps back (an
// NTP step, a VM restored or migrated), a run saved just before the step
// has an mtime ahead of everything written for a while. A process killed
// after a terminal commit's append in that window leaves, after the
// reopen, a running run whose ledger holds its terminal record — the
// half-made end staging exists to prevent (the next end adds a second
// terminal record). Nobody else touched the directory here.
func TestStagedCommitFinishedAfterClockStepBack(t *testing.T) {
	dir := t.TempDir()
	runPath := filepath.Join(dir, "run_r1.json")
	terminalCommitKilledAfterAppend(t, dir, func() {
		// The run was saved at 12:00:02; the clock then stepped back to
		// 12:00:00, and the run ends now.
		ahead := time.Now().Add(2 * time.Second)
		if err := os.Chtimes(runPath, ahead, ahead); err != nil {
			t.Fatal(err)
		}
	}, func(string) {})
	r, terminal := reopenedTerminal(t, dir)
	if r.Status != durable.RunCompleted || terminal != 1 {
		t.Errorf("after the reopen: run %s with %d terminal records; want completed with its one terminal record (the records landed and nobody else wrote)",
			r.Status, terminal)
	}
}

// TestStagedCommitLeavesARunSavedInTheSameTick: "If another process
// (Python) used the directory in between, saving the run or appending to
// its ledger, the staged file is dropped and its work left alone"
// (docs/architecture.md). The recovery tells "saved in between" by the
// run file's mtime being after the staged file's, so a save in the same
// timestamp tick as the staging (the mtime of a new file is the last
// clock tick: ~4 ms here, 1 s or 2 s on some file systems) is not seen,
// and the staged state is renamed over the state Python saved. The save
// here replaces the run file (as Python's os.replace does: a new inode)
// after the staging; its mtime is set equal to the staged file's, as one
// clock tick gives.
func TestStagedCommitLeavesARunSavedInTheSameTick(t *testing.T) {
	dir := t.TempDir()
	runPath := filepath.Join(dir, "run_r1.json")
	terminalCommitKilledAfterAppend(t, dir, func() {}, func(staged string) {
		fi, err := os.Stat(staged)
		if err != nil {
			t.Fatal(err)
		}
		pythonSave(t, runPath, identityRun("r1", "pyth", durable.RunWaiting))
		if err := os.Chtimes(runPath, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	})
	r, _ := reopenedTerminal(t, dir)
	if r.Vars["tag"] != "pyth" || r.Status != durable.RunWaiting {
		t.Errorf("after the reopen: run %s, tag %v; want the state Python saved after the staging (waiting, tag pyth) left alone",
			r.Status, r.Vars["tag"])
	}
}

// TestStagedNameRecordsRunFileContent: a staged name with the run file's
// size and sum, or with its inode number (the form written before),
// reads back as one without either (the format of earlier releases), and
// only it gives its field; stagedNameOf records the run
// file's size and sum when there is one and the name fits.
func TestStagedNameRecordsRunFileContent(t *testing.T) {
	appended := []byte("records\n")
	for _, id := range []string{"r1", "a.b-c.1-2", "r.5", "r.5-a"} {
		want := stagedCommit{id, 12, 12 + int64(len(appended)), appendSum(appended)}
		name := stagedNameFor(id, 12, appended, 4711)
		if c, ok := parseStagedName(name); !ok || c != want {
			t.Errorf("%q: read back %+v %v, want %+v", name, c, ok, want)
		}
		if ino, ok := stagedIno(name); !ok || ino != 4711 {
			t.Errorf("%q: inode %d %v, want 4711", name, ino, ok)
		}
		if size, sum, ok := stagedRunContent(name); ok {
			t.Errorf("%q: read a run file size %d and sum %x from a name without them", name, size, sum)
		}
		content := stagedNameWithContent(id, 12, appended, 345, 0xbeef)
		if c, ok := parseStagedName(content); !ok || c != want {
			t.Errorf("%q: read back %+v %v, want %+v", content, c, ok, want)
		}
		if size, sum, ok := stagedRunContent(content); !ok || size != 345 || sum != 0xbeef {
			t.Errorf("%q: run file size %d, sum %x, %v; want 345, beef", content, size, sum, ok)
		}
		if ino, ok := stagedIno(content); ok {
			t.Errorf("%q: read an inode number %d from a name without one", content, ino)
		}
		old := stagedName(id, 12, appended)
		if c, ok := parseStagedName(old); !ok || c != want {
			t.Errorf("%q: read back %+v %v, want %+v", old, c, ok, want)
		}
		if ino, ok := stagedIno(old); ok {
			t.Errorf("%q: read an inode number %d from a name without one", old, ino)
		}
		if _, _, ok := stagedRunContent(old); ok {
			t.Errorf("%q: read a run file size and sum from a name without them", old)
		}
	}
	for _, bad := range []string{".commit-r1.5.tmp", ".commit-.1-2-a.5.tmp", ".commit-r1.1-2.5.tmp", ".commit-r1.1-2-a.x5.tmp",
		".commit-r1.1-2-a.5-zz.tmp", ".commit-r1.1-2-a.-5-a.tmp", ".commit-r1.1-2.5-a.tmp", ".commit-.1-2-a.5-a.tmp"} {
		if _, ok := parseStagedName(bad); ok {
			t.Errorf("%q read as a staged name", bad)
		}
	}

	dir := t.TempDir()
	st := openInternal(t, dir)
	path := filepath.Join(dir, "run_r1.json")
	if got, want := st.stagedNameOf("r1", path, 12, appended), stagedName("r1", 12, appended); got != want {
		t.Errorf("no run file: staged as %q, want %q", got, want)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := st.stagedNameOf("r1", path, 12, appended), stagedNameWithContent("r1", 12, appended, 2, appendSum([]byte("{}"))); got != want {
		t.Errorf("staged as %q, want %q", got, want)
	}
	if got := st.stagedNameOf("r1", path, -1, appended); got != "" {
		t.Errorf("a ledger of unknown size staged as %q, want unstaged", got)
	}
	long := strings.Repeat("r", 240)
	if got := st.stagedNameOf(long, path, 12, appended); got != "" {
		t.Errorf("a %d-byte id staged as %q, want unstaged", len(long), got)
	}
}

// TestStagedNameSumsTheRunFileAsWritten: the run file's sum a terminal
// commit's staged name records is that of the bytes on disk, whether the
// store knows it from its own last write or reads the file (after
// another process replaced it).
func TestStagedNameSumsTheRunFileAsWritten(t *testing.T) {
	dir := t.TempDir()
	st := openInternal(t, dir)
	ctx := t.Context()
	if err := st.RunCommit(ctx, &store.CommitParams{Run: identityRun("r1", "ours", durable.RunWaiting), Create: true}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run_r1.json")
	appended := []byte("records\n")
	check := func(what string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := stagedNameWithContent("r1", 12, appended, int64(len(data)), appendSum(data))
		if got := st.stagedNameOf("r1", path, 12, appended); got != want {
			t.Errorf("%s: staged as %q, want %q", what, got, want)
		}
	}
	if c, _ := st.cache.Get("r1"); c == nil || !c.summed {
		t.Fatal("precondition: the commit left no sum of the run file in the cache")
	}
	check("as the store wrote it")
	pythonSave(t, path, identityRun("r1", "pyth", durable.RunRunning))
	check("after another process saved it")
}

// TestOldStagedNameStillRecovers: a staged name without the inode number,
// as the previous release leaves it, is still finished or dropped by
// file times: finished when the run file is older than the staged file,
// dropped when it was written after it.
func TestOldStagedNameStillRecovers(t *testing.T) {
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	for _, runSavedLater := range []bool{false, true} {
		t.Run(fmt.Sprintf("run saved later %v", runSavedLater), func(t *testing.T) {
			dir := stagedDirOnDisk(t, first+records, int64(len(first)), []byte(records), runSavedLater)
			r, err := openInternal(t, dir).RunGet(context.Background(), "r1")
			if err != nil {
				t.Fatal(err)
			}
			want := durable.RunCompleted
			if runSavedLater {
				want = durable.RunWaiting
			}
			if r.Status != want {
				t.Errorf("after the reopen: run %s, want %s", r.Status, want)
			}
			if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
				t.Errorf("staged files left: %v", left)
			}
		})
	}
}

// TestStagedNameJudgedByRunFileInode: a staged name with the run file's
// inode number is finished, and a partial append of it cut off, when that
// file is still the run file, whatever the file times say (here the run
// file's are after the staged file's, as after the clock stepped back);
// when another file replaced it (Python's os.replace), whatever the file
// times say (here before the staged file's, as in one timestamp tick),
// the staged file is dropped and the ledger left alone.
func TestStagedNameJudgedByRunFileInode(t *testing.T) {
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	cases := []struct {
		name       string
		ledger     string
		replaced   bool
		wantStatus durable.RunStatus
		wantBy     string
		wantLedger string
	}{
		{"landed, same file", first + records, false, durable.RunCompleted, "", first + records},
		{"landed, replaced", first + records, true, durable.RunWaiting, "other", first + records},
		{"partial, same file", first + records[:10], false, durable.RunWaiting, "ours", first},
		{"partial, replaced", first + records[:10], true, durable.RunWaiting, "other", first + records[:10]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, data string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			runFile := func(by string) string {
				return `{"run_id": "r1", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {"saved_by": "` + by + `"}}`
			}
			runPath := write("run_r1.json", runFile("ours"))
			fi, err := os.Stat(runPath)
			if err != nil {
				t.Fatal(err)
			}
			ino := fileIDOf(fi).ino
			if ino == 0 {
				t.Skip("no inode numbers on this system")
			}
			write("ledger_r1.jsonl", c.ledger)
			staged := write(stagedNameFor("r1", int64(len(first)), []byte(records), ino),
				`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "a", "vars": {}}`)
			stagedAt := time.Now().Add(-time.Hour)
			runAt := stagedAt.Add(time.Minute)
			if c.replaced {
				tmp := write("run_r1.json.0123456789abcdef0123456789abcdef.tmp", runFile("other"))
				if err := os.Rename(tmp, runPath); err != nil {
					t.Fatal(err)
				}
				runAt = stagedAt.Add(-time.Minute)
			}
			checkStagedReopen(t, dir, staged, runPath, stagedAt, runAt, c.wantStatus, c.wantBy, c.wantLedger)
		})
	}
}

// checkStagedReopen dates the staged file and the run file of run r1 in
// dir, reopens the store and checks the run (its status and vars.saved_by)
// and its ledger, and that no staged file is left.
func checkStagedReopen(t *testing.T, dir, staged, runPath string, stagedAt, runAt time.Time,
	wantStatus durable.RunStatus, wantBy, wantLedger string) {
	t.Helper()
	if err := os.Chtimes(staged, stagedAt, stagedAt); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(runPath, runAt, runAt); err != nil {
		t.Fatal(err)
	}
	r, err := openInternal(t, dir).RunGet(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if by, _ := r.Vars["saved_by"].(string); r.Status != wantStatus || by != wantBy {
		t.Errorf("after the reopen: run %s (saved_by %q), want %s (saved_by %q)", r.Status, by, wantStatus, wantBy)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl")); string(got) != wantLedger {
		t.Errorf("ledger %q, want %q", got, wantLedger)
	}
	if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
		t.Errorf("staged files left: %v", left)
	}
}

// TestCommitConflictsWithSameSizeRewriteInOneMtimeTick: a commit checks
// the run file's stamp (mtime, size and file identity) to notice a save by
// another process since the store last wrote it. Python replacing the run
// file within one mtime tick with a state of the same size keeps mtime and
// size; only the file identity tells, and without it the commit of the
// state read before would overwrite Python's save instead of conflicting.
func TestCommitConflictsWithSameSizeRewriteInOneMtimeTick(t *testing.T) {
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	r := identityRun("r1", "ours", durable.RunWaiting)
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	sameSizeSaveInOneTick(t, filepath.Join(dir, "run_r1.json"))
	r.Vars["tag"] = "late"
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit of the state read before the foreign save: %v, want ErrConflict", err)
	}
	if got, err := s.RunGet(ctx, "r1"); err != nil || got.Vars["tag"] != "pyth" {
		t.Errorf("RunGet after the refused commit = %v, %v; want the foreign save (tag pyth)", got, err)
	}
}

// sameSizeSaveInOneTick replaces the run file at path (run r1, saved by
// this store as identityRun "ours", waiting) as Python does, by rename,
// with a state of the same size (tag "pyth", running), and pins its mtime
// to the old one: a save within one mtime tick that mtime and size cannot
// tell apart.
func sameSizeSaveInOneTick(t *testing.T, path string) {
	t.Helper()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pythonSave(t, path, identityRun("r1", "pyth", durable.RunRunning)) // same size: "ours"/"pyth", "waiting"/"running"
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || after.Size() != before.Size() {
		t.Fatalf("precondition: same size after the rewrite: %v, %v", after, err)
	}
}
