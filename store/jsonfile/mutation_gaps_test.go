package jsonfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// Tests added by mutation testing of store/jsonfile and atomicfile: each
// fails on a plausible bug that no other test caught.

func mutRun(id, tag string) *durable.RunState {
	now := durable.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
		Vars: map[string]any{"tag": tag}, CreatedAt: now, UpdatedAt: now}
}

func mutWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mutCommands(t *testing.T, s *Store) []string {
	t.Helper()
	recs, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.CommandID)
	}
	return out
}

func mutSteps(t *testing.T, s *Store, runID string) []string {
	t.Helper()
	recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.StepID)
	}
	return out
}

// cmdLine is a command line as Python's JsonlCommandStore writes it.
func cmdLine(id, run string, seq int) string {
	return `{"command_id": "` + id + `", "run_id": "` + run + `", "type": "pause", "payload": {}, ` +
		`"ts": "2026-01-01T09:00:00+00:00", "client_id": null, "seq": ` + string(rune('0'+seq)) + `}`
}

// Package doc: "the store removes its spares when it closes". Replacing
// a run file leaves a spare in the directory; Close must take it away so
// that the directory holds only the Python layout.
func TestCloseRemovesTheSpareFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	r := mutRun("r1", "a")
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"b", "c"} {
		r.Vars["tag"] = tag
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := atomicfile.Glob(dir, atomicfile.SparePattern); len(left) == 0 {
		t.Skip("no spare file was made (no atomic exchange here)")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := atomicfile.Glob(dir, atomicfile.SparePattern); len(left) != 0 {
		t.Errorf("spare files left after Close: %v", left)
	}
}

// A New that fails after taking the directory lock (here commands.jsonl
// cannot be read) releases it: once the cause is gone, the directory
// opens, instead of failing with ErrDirInUse until the process ends.
func TestFailedOpenReleasesTheDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, commandsFile)
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err := New(Config{Dir: dir, NoSync: true}); err == nil {
		_ = s.Close()
		t.Fatal("New succeeded with a directory in place of commands.jsonl")
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatalf("New after the failed one: %v (lock not released?)", err)
	}
	_ = s.Close()
}

// A run file that appears after the store opened (written by another
// process) is adopted at version 1, as a run found at open is (package
// doc), and commits at that version.
func TestRunFileWrittenAfterOpenIsAtVersionOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	b, err := durable.MarshalRun(mutRun("ext", "from elsewhere"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	mutWrite(t, filepath.Join(dir, "run_ext.json"), string(b))
	got, err := s.RunGet(ctx, "ext")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 {
		t.Errorf("adopted run at version %d, want 1", got.Version)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: got}); err != nil || got.Version != 2 {
		t.Errorf("commit of the adopted run: %v, version %d; want nil, 2", err, got.Version)
	}
}

// readRunFile: "its run_id must match id". A run file whose run_id names
// another run (a copy under the wrong name) is unreadable: RunGet reports
// an error naming the file rather than another run's state, and listings
// do not show the other run twice.
func TestRunFileOfAnotherRunIsUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := durable.MarshalRun(mutRun("x", "x's state"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	mutWrite(t, filepath.Join(dir, "run_x.json"), string(b))
	wrong := filepath.Join(dir, "run_y.json")
	mutWrite(t, wrong, string(b))
	s := openInternal(t, dir)
	ctx := t.Context()
	got, err := s.RunGet(ctx, "y")
	if err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), wrong) {
		t.Errorf("RunGet(y) of a file holding run x = %v, %v; want an error naming %s", got, err, wrong)
	}
	list, err := s.RunList(ctx, &store.RunListParams{})
	if err != nil || len(list) != 1 || list[0].RunID != "x" {
		var ids []string
		for _, r := range list {
			ids = append(ids, r.RunID)
		}
		t.Errorf("RunList = %v, %v; want only x", ids, err)
	}
}

// The cached state is "valid while the file keeps the same modification
// time and size" (cachedRun): a rewrite by another process within the
// file system's timestamp granularity (same mtime) but of another size
// is read again.
func TestRunFileRewrittenWithSameMtimeIsReadAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	if err := s.RunCommit(ctx, &store.CommitParams{Run: mutRun("r1", "mine"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunGet(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run_r1.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRun(mutRun("r1", "rewritten by another process"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	mutWrite(t, path, string(b))
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vars["tag"] != "rewritten by another process" {
		t.Errorf("RunGet after a same-mtime rewrite of another size: tag %q; want the file's", got.Vars["tag"])
	}
}

// appendFile appends "in one write": a write that stores only part of
// the line without reporting an error is still a failed append, cut back
// off the file, not a command reported accepted with a torn line.
func TestShortWriteFailsTheAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		return f.Write(data[:len(data)-1])
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err == nil {
		t.Fatalf("a short write was reported as %+v", res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mutCommands(t, openInternal(t, dir)); len(got) != 0 {
		t.Errorf("commands after a reopen = %v, want none", got)
	}
}

// A ledger append that fails partway and cannot be cut back (its file
// descriptor is gone) leaves a torn line; the store forgets what it knew
// of the file, so the next append starts on a new line and its record is
// read back, in process and after a reopen.
func TestLedgerAppendAfterAnUncutTornWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	rec := func(step string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "r1", StepID: step, NodeID: "n", Status: durable.StepCompleted}}
	}
	if err := s.LedgerAppend(ctx, "r1", rec("s1")); err != nil {
		t.Fatal(err)
	}
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		n, _ := f.Write(data[:len(data)/2])
		_ = f.Close() // the truncate that would cut it back fails
		return n, errors.New("disk full (test)")
	}
	if err := s.LedgerAppend(ctx, "r1", rec("torn")); err == nil {
		t.Fatal("the torn ledger append reported success")
	}
	if err := s.LedgerAppend(ctx, "r1", rec("s2")); err != nil {
		t.Fatal(err)
	}
	if got := mutSteps(t, s, "r1"); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("ledger in process = %v, want [s1 s2]", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mutSteps(t, openInternal(t, dir), "r1"); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("ledger after a reopen = %v, want [s1 s2]", got)
	}
}

// CommandListAfter returns commands "in seq order" (store.CommandStore)
// even when commands.jsonl holds them out of order (racing writers).
func TestCommandsListedInSeqOrderFromAnUnorderedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mutWrite(t, filepath.Join(dir, commandsFile),
		cmdLine("c3", "r", 3)+"\n"+cmdLine("c1", "r", 1)+"\n"+cmdLine("c2", "r", 2)+"\n")
	s := openInternal(t, dir)
	if got := mutCommands(t, s); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Errorf("commands = %v, want [c1 c2 c3]", got)
	}
	recs, next, err := s.CommandListAfter(t.Context(), 1, 0)
	if err != nil || len(recs) != 2 || recs[0].CommandID != "c2" || recs[1].CommandID != "c3" || next != 3 {
		t.Errorf("CommandListAfter(1) = %d commands, next %d, %v; want c2, c3 and next 3", len(recs), next, err)
	}
}

// CommandDeleteByRun copies every other line byte for byte, as Python's
// delete_by_run does: a line of two joined commands of which none is
// deleted stays one line, as it was.
func TestCommandDeleteKeepsAJoinedLineOfKeptCommandsAsItWas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	joined := cmdLine("c1", "keep", 1) + cmdLine("c2", "keep", 2)
	path := filepath.Join(dir, commandsFile)
	mutWrite(t, path, joined+"\n"+cmdLine("c3", "gone", 3)+"\n")
	s := openInternal(t, dir)
	if n, err := s.CommandDeleteByRun(t.Context(), "gone"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v; want 1", n, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != joined+"\n" {
		t.Errorf("commands.jsonl after the delete = %q, want the joined line unchanged %q", b, joined+"\n")
	}
}

// CommandDeleteByRun: "Only what left the file leaves memory, so a reopen
// lists the same." A command of the run recovered from a line that stays
// in the file (it is followed by a torn value, so the line is kept as it
// is) is still listed, before and after a reopen.
func TestCommandDeleteKeepsListingWhatStaysInTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mutWrite(t, filepath.Join(dir, commandsFile),
		cmdLine("c1", "r1", 1)+`{"command_id": "tor`+"\n"+cmdLine("c2", "r1", 2)+"\n"+cmdLine("c3", "r2", 3)+"\n")
	s := openInternal(t, dir)
	if got := mutCommands(t, s); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("commands at open = %v", got)
	}
	if _, err := s.CommandDeleteByRun(t.Context(), "r1"); err != nil {
		t.Fatal(err)
	}
	before := mutCommands(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := mutCommands(t, openInternal(t, dir))
	if !slices.Equal(before, after) {
		t.Errorf("after the delete: listed %v in process but %v after a reopen", before, after)
	}
}

// CommandLastSeq is "the highest stored seq": once the newest commands
// are deleted it is the highest left (as Python's get_last_seq after
// delete_by_run), while their seqs are still never issued again.
func TestCommandLastSeqIsTheHighestStoredAfterADelete(t *testing.T) {
	t.Parallel()
	s := openInternal(t, t.TempDir())
	ctx := t.Context()
	for _, c := range []struct{ id, run string }{{"a", "keep"}, {"b", "gone"}} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.id, RunID: c.run, Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CommandDeleteByRun(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if last, err := s.CommandLastSeq(ctx); err != nil || last != 1 {
		t.Errorf("CommandLastSeq after deleting the newest = %d, %v; want 1", last, err)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c", RunID: "keep", Type: "resume"})
	if err != nil || res.Seq != 3 {
		t.Errorf("next append = %+v, %v; want seq 3", res, err)
	}
}

// A cursor file whose cursor is a float (written by another tool) is read
// as Python's JsonFileCommandCursorStore.load reads it, int(cursor).
func TestCursorSavedAsAFloatIsReadAsItsInteger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mutWrite(t, filepath.Join(dir, "commands_cursor.json"), `{"cursor": 7.0, "updated_at": "2026-01-01T09:00:00+00:00"}`)
	s := openInternal(t, dir)
	if n, err := s.CursorLoad(t.Context(), store.DefaultConsumer); err != nil || n != 7 {
		t.Errorf("CursorLoad = %d, %v; want 7", n, err)
	}
}

// A command id found twice in commands.jsonl (two racing writers) keeps
// the seq of its first line, as Python's _rebuild_index keeps it: a
// duplicate append reports that seq.
func TestDuplicateCommandInTheFileKeepsItsFirstSeq(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mutWrite(t, filepath.Join(dir, commandsFile), cmdLine("c1", "r", 1)+"\n"+cmdLine("c1", "r", 2)+"\n")
	s := openInternal(t, dir)
	res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c1", RunID: "r", Type: "pause"})
	if err != nil || !res.Duplicate || res.Seq != 1 {
		t.Errorf("append of c1 = %+v, %v; want a duplicate of seq 1", res, err)
	}
	if res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c2", RunID: "r", Type: "pause"}); err != nil || res.Seq != 3 {
		t.Errorf("append of c2 = %+v, %v; want seq 3", res, err)
	}
}

// TestCommandDeleteMatchesAPaddedRunID: a line whose run_id has spaces
// around it (written by hand or by another tool) belongs to the run, as
// Python's delete_by_run strips the id it reads; it leaves the file and
// the listing, and a reopen lists the same.
func TestCommandDeleteMatchesAPaddedRunID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mutWrite(t, filepath.Join(dir, commandsFile), cmdLine("c1", " r1 ", 1)+"\n"+cmdLine("c2", "r2", 2)+"\n")
	s := openInternal(t, dir)
	if n, err := s.CommandDeleteByRun(t.Context(), "r1"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun(r1) = %d, %v; want the padded line's command", n, err)
	}
	if got := mutCommands(t, s); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("commands after the delete = %v; want [c2]", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mutCommands(t, openInternal(t, dir)); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("commands after a reopen = %v; want [c2]", got)
	}
}
