package jsonfile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// commandIDRuns lists every command as "id/run".
func commandIDRuns(t *testing.T, s *jsonfile.Store) []string {
	t.Helper()
	recs, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.CommandID+"/"+r.RunID)
	}
	return out
}

// A line holding two concatenated commands (a Python writer whose big
// command was written without its newline before another append, or two
// racing Python appends) is read back as two commands. CommandDeleteByRun
// of the run of one of them drops it from memory but leaves the whole
// line in commands.jsonl, so the deleted command comes back after a
// reopen (and meanwhile its id is free for a new append).
func TestDeleteByRunConcatenatedCommandComesBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "commands.jsonl"),
		`{"command_id": "c1", "run_id": "A", "type": "pause", "payload": {}, "ts": "2026-01-01T09:00:01+00:00", "client_id": null, "seq": 1}`+
			`{"command_id": "c2", "run_id": "B", "type": "pause", "payload": {}, "ts": "2026-01-01T09:00:02+00:00", "client_id": null, "seq": 2}`+"\n"+
			`{"command_id": "c3", "run_id": "A", "type": "resume", "payload": {}, "ts": "2026-01-01T09:00:03+00:00", "client_id": null, "seq": 3}`+"\n")
	s := open(t, dir, true)
	if got := commandIDRuns(t, s); !slices.Equal(got, []string{"c1/A", "c2/B", "c3/A"}) {
		t.Fatalf("commands at open = %v", got)
	}
	if _, err := s.CommandDeleteByRun(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	before := commandIDRuns(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := commandIDRuns(t, open(t, dir, true))
	if !slices.Equal(before, after) || slices.Contains(after, "c1/A") {
		data, _ := os.ReadFile(filepath.Join(dir, "commands.jsonl"))
		t.Fatalf("after deleting run A's commands: listed %v in process, %v after a reopen (want [c2/B] both times); commands.jsonl = %s", before, after, data)
	}
}

// Close promises that later calls fail and waits for the writes in
// flight before it removes its spares and drops the directory lock. But a
// write checks that the store is open before it takes its lock, and Close
// only locks and unlocks each lock once: a write that passed the check
// but reached its lock after Close went by (a goroutine that barges into
// a contended mutex, as Close's own Lock does) writes after Close has
// returned, when another store may already own the directory.
func TestNoCommandWrittenAfterClose(t *testing.T) {
	t.Parallel()
	for attempt := 0; attempt < 20; attempt++ {
		dir := t.TempDir()
		s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "commands.jsonl")
		var wg sync.WaitGroup
		var started atomic.Int64
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					_, err := s.CommandAppend(context.Background(), &durable.CommandRecord{
						CommandID: fmt.Sprintf("g%d-%d", g, i), RunID: "r", Type: "pause"})
					if err != nil {
						return
					}
					started.Add(1)
				}
			}()
		}
		for started.Load() < 200 {
			runtime.Gosched()
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		fi2, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi2.Size() != fi.Size() {
			t.Fatalf("attempt %d: commands.jsonl grew from %d to %d bytes after Close returned", attempt, fi.Size(), fi2.Size())
		}
	}
}
