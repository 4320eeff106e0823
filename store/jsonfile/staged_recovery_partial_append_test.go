package jsonfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// TestStagedRecoveryKeepsAShorterAppendOfAnotherProcess: our process
// ticks r1 (running at its LLM node), stages the run's completed state
// and is killed before it appends the commit's records (the "staged"
// point), so the run file still says running at "llm". A Python gateway
// on the same data dir (it takes no lock and ignores hidden files) picks
// the running run up and re-executes the node: per spec runtime-model
// §2.4 it appends the STARTED record of the effect, then calls the
// handler (an LLM call, seconds), and saves the run only afterwards
// (ledger ahead of state). Our store opens the directory meanwhile.
// Python's record is shorter than the records the staged commit meant to
// append, so the ledger's size falls strictly between the two sizes in
// the staged name, and the recovery takes Python's whole, acknowledged
// record for a torn part of our own append and cuts it off the ledger.
// docs/architecture.md: "If another process (Python) used the directory
// in between, saving the run or appending to its ledger, the staged file
// is dropped and its work left alone (nor is a partial append cut off)".
// The recovery only asks whether the run file was saved since; nothing
// checks that the bytes it cuts are a part of the records it staged.
func TestStagedRecoveryKeepsAShorterAppendOfAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runFile := `{"run_id": "r1", "workflow_id": "w", "status": "running", "current_node": "llm", "vars": {}}`
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "start", "status": "completed", "idempotency_key": "k0"}` + "\n"
	// What the killed commit meant to append: the LLM call's STARTED and
	// completed records and the terminal status record.
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "llm", "status": "started", "idempotency_key": "k1"}` + "\n" +
		`{"run_id": "r1", "step_id": "s2", "node_id": "llm", "status": "completed", "idempotency_key": "k1", "result": {"content": "hello"}}` + "\n" +
		`{"run_id": "r1", "step_id": "s3", "node_id": "llm", "status": "completed", "idempotency_key": "system:terminal_status:completed"}` + "\n"
	write("run_r1.json", runFile)
	write(stagedNameWithContent("r1", int64(len(first)), []byte(records), int64(len(runFile)), appendSum([]byte(runFile))),
		`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "llm", "vars": {}, "output": {"content": "hello"}}`)
	// Python's STARTED record of its own attempt, appended in one write.
	python := `{"run_id": "r1", "step_id": "py-1", "node_id": "llm", "status": "started", "idempotency_key": "k1"}` + "\n"
	if len(python) >= len(records) {
		t.Fatal("precondition: Python's line is shorter than the staged records")
	}
	write("ledger_r1.jsonl", first+python)

	st := openInternal(t, dir)
	got, err := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != first+python {
		t.Errorf("the open changed the ledger to %q:\nPython's acknowledged record %s is gone (want the ledger left as Python wrote it)",
			got, strings.TrimSpace(python))
	}
	run, err := st.RunGet(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunRunning {
		t.Errorf("run %s after the open, want it running as Python left it", run.Status)
	}
	if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
		t.Errorf("staged files left: %v", left)
	}
}

// TestStagedRecoveryPartialAppendEndings: the recovery of a terminal
// commit whose ledger ends between the two sizes in the staged name cuts
// the bytes past the first size only when they end in a torn line (a part
// of our append, whole records of it included); bytes ending in whole
// lines may be another process's acknowledged records and are left,
// a strict prefix of ours then lacking the terminal record, which is last.
func TestStagedRecoveryPartialAppendEndings(t *testing.T) {
	runFile := `{"run_id": "r1", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {}}`
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	rec2 := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	rec3 := `{"run_id": "r1", "step_id": "s3", "node_id": "a", "status": "completed", "idempotency_key": "system:terminal_status:completed"}` + "\n"
	cases := []struct {
		name, ledger, want string
	}{
		{"torn first record", first + rec2[:10], first},
		{"whole record, then torn", first + rec2 + rec3[:10], first},
		{"whole records", first + rec2, first + rec2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, data string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("run_r1.json", runFile)
			write("ledger_r1.jsonl", c.ledger)
			write(stagedNameWithContent("r1", int64(len(first)), []byte(rec2+rec3), int64(len(runFile)), appendSum([]byte(runFile))),
				`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "a", "vars": {}}`)
			st := openInternal(t, dir)
			got, err := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("ledger after the open:\n%q\nwant\n%q", got, c.want)
			}
			if run, err := st.RunGet(t.Context(), "r1"); err != nil || run.Status != durable.RunWaiting {
				t.Errorf("run after the open: %v, %v; want it waiting (the commit undone)", run, err)
			}
			if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
				t.Errorf("staged files left: %v", left)
			}
		})
	}
}
