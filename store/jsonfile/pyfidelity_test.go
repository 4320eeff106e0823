package jsonfile_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// commands.jsonl as Python 0.4.28's JsonlCommandStore.append writes it
// (json.dumps(asdict(rec), ensure_ascii=False)): ts is the caller's string
// kept as given (str(record.ts).strip()), here the RFC 3339 "Z" form a
// JavaScript client sends (Date.toISOString()).
const pyCmdR0 = `{"command_id": "c1", "run_id": "r0", "type": "pause", "payload": {}, "ts": "2026-01-01T09:00:01.000001+00:00", "client_id": null, "seq": 1}`
const pyCmdR1 = `{"command_id": "c2", "run_id": "r1", "type": "resume", "payload": {"text": "go"}, "ts": "2026-01-01T10:00:00.000Z", "client_id": "web", "seq": 2}`

// Python's delete_by_run keeps every other line byte for byte (kept.append(raw)).
// Ours re-encoded every decoded command (commands.go CommandDeleteByRun ->
// commandLine), keeping the original object only when ts did not parse, so
// deleting run r0's commands rewrote run r1's command: its ts became
// "2026-01-01T10:00:00+00:00".
func TestFidelityCommandDeleteKeepsOtherTS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "commands.jsonl")
	writeFile(t, path, pyCmdR0+"\n"+pyCmdR1+"\n")
	s := open(t, dir, true)
	if n, err := s.CommandDeleteByRun(t.Context(), "r0"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v", n, err)
	}
	if got := readFile(t, path); got != pyCmdR1+"\n" {
		t.Fatalf("after deleting run r0, commands.jsonl =\n%s\nwant run r1's line as Python wrote it:\n%s", got, pyCmdR1)
	}
}

// Same path: members the store does not know (a newer writer's, which
// Python's delete_by_run keeps since it copies raw lines) were dropped from
// the other runs' commands by the rewrite.
func TestFidelityCommandDeleteKeepsUnknownKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "commands.jsonl")
	line := strings.Replace(pyCmdR1, `"ts": "2026-01-01T10:00:00.000Z"`, `"ts": "2026-01-01T10:00:00+00:00"`, 1)
	line = strings.TrimSuffix(line, "}") + `, "origin": {"gateway": "v0.7", "trace": [1, 2]}}`
	writeFile(t, path, pyCmdR0+"\n"+line+"\n")
	s := open(t, dir, true)
	if n, err := s.CommandDeleteByRun(t.Context(), "r0"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v", n, err)
	}
	if got := readFile(t, path); !strings.Contains(got, `"origin"`) {
		t.Fatalf("after deleting run r0, commands.jsonl =\n%s\nrun r1's command lost its \"origin\" member", got)
	}
}
