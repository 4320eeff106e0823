package jsonfile

import (
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// copyDirPreservingTimes copies the regular files of src into dst as
// `cp -a` or `rsync -a` would (same bytes, same modification times, new
// files, hence new inode numbers).
func copyDirPreservingTimes(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		from := filepath.Join(src, e.Name())
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(from)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, e.Name())
		if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(to, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStagedCommitSurvivesADirectoryCopy: the package doc (jsonfile.go,
// "Commit order") promises that "the next open finishes such a commit if
// all its records landed ... so a run's end is never half made", and
// docs/architecture.md ("staged terminal commits") that "the run is
// either ended with its records or not ended at all" unless another
// process saved the run or appended to its ledger meanwhile. Here a
// process is killed after a terminal commit's records landed and nobody
// touches the run afterwards; the data directory is then copied (cp -a /
// rsync -a / a volume moved to another disk or restored from a snapshot,
// all of which give every file a new inode number but keep its bytes and
// times) and the gateway opened on the copy. The recovery must not judge
// "saved since" by the run file's inode number alone: the copied run file
// would count as saved by another process, the staged state be dropped,
// and the run left running with its terminal record in the ledger — the half-made end staging exists to prevent (the next end
// of the run appends a second terminal record).
func TestStagedCommitSurvivesADirectoryCopy(t *testing.T) {
	src := t.TempDir()
	terminalCommitKilledAfterAppend(t, src, func() {}, func(string) {})
	dst := t.TempDir()
	copyDirPreservingTimes(t, src, dst)

	r, terminal := reopenedTerminal(t, dst)
	if r.Status != durable.RunCompleted || terminal != 1 {
		t.Errorf("after opening the copied directory: run %s with %d terminal records; want completed with its one terminal record (the records landed whole and nobody saved the run since)",
			r.Status, terminal)
	}
	// The original directory, opened in place, is finished as promised.
	if r, terminal := reopenedTerminal(t, src); r.Status != durable.RunCompleted || terminal != 1 {
		t.Errorf("control: the original directory gives run %s with %d terminal records", r.Status, terminal)
	}
}

// TestStagedCommitLeavesARunSavedTwiceSinceOnAReusedInode:
// docs/architecture.md ("staged terminal commits"): "If another process
// (Python) used the directory in between, saving the run or appending to
// its ledger, the staged file is dropped and its work left alone". A new
// file does not mean a new inode number: file systems hand a freed number
// out again, ext4 at once (the first save frees the run file's number,
// the second save's temp file gets it back). Here a process is killed
// after a terminal commit's records landed; a Python host then saves the
// run twice without touching the ledger (a pause and a resume, say), and
// its second file gets the number the run file had when the commit was
// staged. The recovery must not tell a save in between by the run file's
// inode number alone: it would take the run for unsaved and rename the
// stale staged state over the state Python saved. (Skipped where the file
// system does not reuse the number within a few saves; on ext4 it does
// at the second.)
func TestStagedCommitLeavesARunSavedTwiceSinceOnAReusedInode(t *testing.T) {
	dir := t.TempDir()
	runPath := filepath.Join(dir, "run_r1.json")
	reused := false
	saves := 0
	terminalCommitKilledAfterAppend(t, dir, func() {}, func(string) {
		// The run file at the kill is the one the commit replaces.
		fi, err := os.Stat(runPath)
		if err != nil {
			t.Fatal(err)
		}
		want := fileIDOf(fi).ino
		if want == 0 {
			return
		}
		for saves < 8 && !reused {
			pythonSave(t, runPath, identityRun("r1", "pyth", durable.RunWaiting))
			saves++
			if fi, err := os.Stat(runPath); err == nil && fileIDOf(fi).ino == want && saves >= 2 {
				reused = true
			}
		}
	})
	if !reused {
		t.Skipf("the file system gave no run file the replaced run file's inode number again in %d saves", saves)
	}
	r, _ := reopenedTerminal(t, dir)
	if r.Vars["tag"] != "pyth" || r.Status != durable.RunWaiting {
		t.Errorf("after the reopen: run %s, tag %v; want the state Python saved (twice) after the crash (waiting, tag pyth) left alone",
			r.Status, r.Vars["tag"])
	}
}

// TestStagedPromoteFailureKilledWhileUndoing: when putting a staged
// terminal state in place fails with the run file unchanged, the commit
// is undone (promote: the records are cut off the ledger). Undoing is two
// steps, cutting the records and dropping the staged name, and a process
// killed between them must leave what the next open settles whole
// (docs/architecture.md, staged terminal commits: "the run is either
// ended with its records or not ended at all"); unstage orders them for
// that reason. A failed Promote must not drop the staged name itself
// before the records are cut: a kill there would leave the
// terminal records without the state they end, and nothing for the next
// open to finish. Promote fails here because the run file became a
// symlink (TestStagedPromoteFails); the kill is at the "promote failed"
// point, and the run file is put back before the reopen.
func TestStagedPromoteFailureKilledWhileUndoing(t *testing.T) {
	dir := t.TempDir()
	st, run := stagedFaultSetup(t, dir)
	runPath := filepath.Join(dir, "run_r1.json")
	aside := symlinkRunFileWhenAppended(t, st, runPath)
	appended := st.killForTest
	killed := false
	st.killForTest = func(p string) {
		appended(p)
		if p == "promote failed" {
			killed = true
			panic(killedHere{})
		}
	}
	run.Status = durable.RunCompleted
	func() {
		defer func() {
			if v := recover(); v != nil && v != (killedHere{}) {
				panic(v)
			}
		}()
		_ = st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}})
	}()
	if !killed {
		t.Fatal("the commit did not reach its promote failed point")
	}
	_ = st.Close()
	if err := os.Remove(runPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, runPath); err != nil {
		t.Fatal(err)
	}
	checkAllOrNothing(t, dir, nil)
}

// TestAppendSumIsFNV1a: the sums in staged names are checked at recovery
// with hash/fnv's New64a (appendedMatch), and earlier releases wrote them
// with it.
func TestAppendSumIsFNV1a(t *testing.T) {
	for _, b := range []string{"", "a", "records\n", `{"run_id": "r1", "status": "completed"}`} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(b))
		if got, want := appendSum([]byte(b)), h.Sum64(); got != want {
			t.Errorf("appendSum(%q) = %x, want %x", b, got, want)
		}
	}
}

// TestStagedNameJudgedByRunFileContent: a staged name with the run file's
// size and sum (staged.go) is finished, and a partial append of it cut
// off, while the run file holds those bytes, whatever file it is and
// whatever its times say (here a copy, a new inode number, with times
// after the staged file's); when the run file holds other bytes (another
// process saved the run), the staged file is dropped and the ledger left
// alone, whatever the times say (here before the staged file's).
func TestStagedNameJudgedByRunFileContent(t *testing.T) {
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	runFile := func(by string) string {
		return `{"run_id": "r1", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {"saved_by": "` + by + `"}}`
	}
	cases := []struct {
		name       string
		ledger     string
		savedBy    string // the run file's saved_by at the reopen ("ours": the bytes the name records)
		wantStatus durable.RunStatus
		wantBy     string
		wantLedger string
	}{
		{"landed, same bytes", first + records, "ours", durable.RunCompleted, "", first + records},
		{"landed, saved since", first + records, "pyth", durable.RunWaiting, "pyth", first + records},
		{"landed, saved since, other size", first + records, "python", durable.RunWaiting, "python", first + records},
		{"partial, same bytes", first + records[:10], "ours", durable.RunWaiting, "ours", first},
		{"partial, saved since", first + records[:10], "pyth", durable.RunWaiting, "pyth", first + records[:10]},
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
			ours := runFile("ours")
			write("ledger_r1.jsonl", c.ledger)
			staged := write(stagedNameWithContent("r1", int64(len(first)), []byte(records), int64(len(ours)), appendSum([]byte(ours))),
				`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "a", "vars": {}}`)
			// Python's save (or a copy of ours): a new file by rename.
			tmp := write("run_r1.json.0123456789abcdef0123456789abcdef.tmp", runFile(c.savedBy))
			runPath := filepath.Join(dir, "run_r1.json")
			if err := os.Rename(tmp, runPath); err != nil {
				t.Fatal(err)
			}
			stagedAt := time.Now().Add(-time.Hour)
			runAt := stagedAt.Add(time.Minute)
			if c.savedBy != "ours" {
				runAt = stagedAt.Add(-time.Minute)
			}
			checkStagedReopen(t, dir, staged, runPath, stagedAt, runAt, c.wantStatus, c.wantBy, c.wantLedger)
		})
	}
}
