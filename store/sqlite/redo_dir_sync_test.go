package sqlite

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// redoDirsyncChildEnv, when set to a directory, makes
// TestFullCommitRedoLogCreationSyncsItsDirectory run as the traced child:
// it opens a synchronous=FULL store there, commits one run and exits at
// once (no Close), the state a power cut right after the acknowledged
// commit would find.
const redoDirsyncChildEnv = "SQLITE_TEST_REDO_DIRSYNC_DIR"

// TestFullCommitRedoLogCreationSyncsItsDirectory: with
// synchronous=FULL an owning store runs the database at NORMAL and makes
// each commit durable by an fdatasync of its redo log (<db>-redo), a file
// it creates at every open (a clean close removes it). A file created
// since the last sync of its directory may be missing after a power cut
// however often the file itself was synced (fsync(2): "Calling fsync()
// does not necessarily ensure that the entry in the directory containing
// the file has also reached disk. For that an explicit fsync() on a file
// descriptor for the directory is also needed."). SQLite, whose FULL this
// setting promises to match, fsyncs the directory when it creates the
// WAL (os_unix.c: UNIXFILE_DIRSYNC for SQLITE_OPEN_WAL); the jsonfile
// and artifact stores fsync their directories too. Without a sync of its
// directory, the first commits acknowledged after an open could be lost
// with the whole log after a power cut. The test runs a child under
// strace and expects an fsync of the database's directory after the redo
// log is created and before the process ends. Where strace does not
// show the child's calls (a sandbox whose ptrace misses threads), the
// child's probe file tells, and the test skips:
// TestFullRedoLogDirectorySyncedAfterCreation checks the same call in
// process.
func TestFullCommitRedoLogCreationSyncsItsDirectory(t *testing.T) {
	if dir := os.Getenv(redoDirsyncChildEnv); dir != "" {
		redoDirsyncChild(t, dir)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("traces Linux system calls")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the store names its files by the resolved path
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace.txt")
	// -y prints each fd argument with its path: the syncs name their
	// files themselves, with no fd bookkeeping to race with other threads'
	// closes (an fd closed and reused while strace splits the close).
	cmd := exec.Command(strace, "-f", "-qq", "-y", "-e", "trace=open,openat,fsync,fdatasync", "-o", trace,
		os.Args[0], "-test.run=^TestFullCommitRedoLogCreationSyncsItsDirectory$", "-test.count=1")
	cmd.Env = append(os.Environ(), redoDirsyncChildEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "ptrace") || strings.Contains(string(out), "Operation not permitted") {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("child: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	redo := filepath.Join(dir, "runtime.sqlite3-redo")
	probe := filepath.Join(dir, redoDirsyncProbe)
	openRe := regexp.MustCompile(`^\d+\s+open(?:at)?\((?:AT_FDCWD(?:<[^>]*>)?, )?"([^"]*)", ([^)]*)\) = \d+`)
	syncRe := regexp.MustCompile(`^\d+\s+f(?:data)?sync\(\d+<([^>]*)>\)\s+= 0`)
	created, dirSynced, probeCreated, probeSynced := false, false, false, false
	var seen []string // the calls on files of dir, for the failure message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	unfinished := map[string]string{} // pid → a call strace split around another thread's
	resumedRe := regexp.MustCompile(`^(\d+)\s+<\.\.\. \w+ resumed>(.*)$`)
	for sc.Scan() {
		line := sc.Text()
		if head, ok := strings.CutSuffix(line, " <unfinished ...>"); ok {
			unfinished[strings.Fields(head)[0]] = head
			continue
		}
		if m := resumedRe.FindStringSubmatch(line); m != nil {
			line = unfinished[m[1]] + m[2]
			delete(unfinished, m[1])
		}
		if strings.Contains(line, dir) && len(seen) < 40 {
			seen = append(seen, line)
		}
		if m := openRe.FindStringSubmatch(line); m != nil {
			if strings.Contains(m[2], "O_CREAT") {
				switch m[1] {
				case redo:
					created = true
				case probe:
					probeCreated = true
				}
			}
			continue
		}
		if m := syncRe.FindStringSubmatch(line); m != nil {
			switch strings.TrimSuffix(m[1], "/") {
			case probe:
				probeSynced = probeCreated
			case dir:
				dirSynced = dirSynced || created
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the trace: %v", err)
	}
	if !probeCreated || !probeSynced {
		t.Skipf("strace here does not show the child's own calls (probe %s created %v, synced %v); "+
			"TestFullRedoLogDirectorySyncedAfterCreation checks the directory sync in process. Calls seen on %s:\n%s",
			probe, probeCreated, probeSynced, dir, strings.Join(seen, "\n"))
	}
	if !created {
		t.Fatalf("the trace shows the child's probe but not the redo log %s created; calls seen on %s:\n%s", redo, dir, strings.Join(seen, "\n"))
	}
	if !dirSynced {
		t.Errorf("synchronous=FULL: the redo log %s was created, but its directory %s was never fsync'd after: a power cut can lose the new file, and with it every commit acknowledged since the open; calls seen:\n%s",
			redo, dir, strings.Join(seen, "\n"))
	}
}

// redoDirsyncProbe is a file the traced child creates and fsyncs before
// it opens the store, on the thread that opens it: a trace without it
// comes from a tracer that misses that thread.
const redoDirsyncProbe = "trace-probe"

// redoDirsyncChild is the traced child: probe, open FULL, commit, exit.
func redoDirsyncChild(t *testing.T, dir string) {
	ctx := context.Background()
	// One OS thread for the probe and the open (the redo log's creation
	// and its directory's sync happen in New, on this goroutine).
	runtime.LockOSThread()
	p, err := os.OpenFile(filepath.Join(dir, redoDirsyncProbe), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	s, err := New(ctx, Config{Path: filepath.Join(dir, "runtime.sqlite3"), Synchronous: "FULL"})
	if err != nil {
		t.Fatal(err)
	}
	r := &durable.RunState{RunID: "0123456789abcdef0123456789abcdef", WorkflowID: "wf", Status: durable.RunRunning}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true,
		Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "s1", Status: durable.StepCompleted}}}); err != nil {
		t.Fatal(err)
	}
	os.Exit(0) // acknowledged; the power goes now
}
