package benchwork

import (
	"context"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Verified is what the untimed check of a workload's runs found.
type Verified struct {
	Runs int
	// LedgerRecords and LedgerBytes total the runs' ledgers (bytes of
	// each record as Python's json.dumps writes it by default).
	LedgerRecords int64
	LedgerBytes   int64
	// StateBytes totals the final RunStates as Python's json.dumps writes
	// them by default.
	StateBytes int64
}

// dumps is the encoding used to size states and records: Python's
// json.dumps defaults (separators ", " and ": ", ASCII), as the peer
// harness and the bench README size them.
var dumps = pyjson.Style{ASCII: true}

// expectedOutput is the canonical JSON output of each workload's runs.
var expectedOutput = map[string]string{
	W1Chain:     `{"nodes":10,"ok":true}`,
	W2AskResume: `{"answer":"yes"}`,
	W3Past:      `{"ok":true}`,
	W3Due:       `{"ok":true}`,

	w3DueFellBack: `{"ok":true}`,
}

// Verify reloads every run of a workload outcome from the store and checks
// it: status completed, the expected output, the workload's vars (W1: k0…
// k9; W2: answer; W3: woke; W3b: no woke), and a ledger ending with the
// terminal status event, seqs 1…n. For W4 it re-reads each ledger and
// checks that the timed loop read as many records. Any failure is an
// error naming the run.
func Verify(ctx context.Context, env *Env, out *Outcome) (*Verified, error) {
	if len(out.RunIDs) == 0 {
		return nil, fmt.Errorf("%s: no runs to verify", out.Workload)
	}
	v := &Verified{Runs: len(out.RunIDs)}
	for _, id := range out.RunIDs {
		recs, err := env.Runtime.GetLedger(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out.Workload, err)
		}
		if err := checkLedger(recs); err != nil {
			return nil, fmt.Errorf("%s run %s: ledger: %w", out.Workload, id, err)
		}
		v.LedgerRecords += int64(len(recs))
		for _, rec := range recs {
			b, err := durable.MarshalRecord(rec, dumps)
			if err != nil {
				return nil, fmt.Errorf("%s run %s: encoding record %d: %w", out.Workload, id, rec.Seq, err)
			}
			v.LedgerBytes += int64(len(b))
		}
		if out.Workload == W4LedgerRead {
			continue
		}
		st, err := env.Runtime.GetState(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out.Workload, err)
		}
		check := out.Workload
		if out.Workload == W3Due && out.fellBack[id] {
			check = w3DueFellBack // counted in immediate_fallbacks, not a failure
		}
		if err := checkRun(check, st); err != nil {
			return nil, fmt.Errorf("%s run %s: %w", out.Workload, id, err)
		}
		b, err := durable.MarshalRun(st, dumps)
		if err != nil {
			return nil, fmt.Errorf("%s run %s: encoding state: %w", out.Workload, id, err)
		}
		v.StateBytes += int64(len(b))
	}
	if out.Workload == W4LedgerRead && v.LedgerRecords != out.Steps {
		return nil, fmt.Errorf("w4: the timed loop read %d records, the ledgers hold %d", out.Steps, v.LedgerRecords)
	}
	// Steps are counted in the node handlers, not assumed: a node run twice
	// (a replay) would inflate steps_per_s, so the count must be exact, as
	// the peer harness requires.
	if per := StepsPerRun(out.Workload); per > 0 && out.Steps != per*int64(len(out.RunIDs)) {
		return nil, fmt.Errorf("%s: the handlers counted %d steps for %d runs, want %d", out.Workload, out.Steps, len(out.RunIDs), per*int64(len(out.RunIDs)))
	}
	return v, nil
}

// checkRun checks a final run state of a workload.
func checkRun(workload string, st *durable.RunState) error {
	if st.Status != durable.RunCompleted {
		return fmt.Errorf("status %s, want completed (error %q)", st.Status, st.Error)
	}
	got, err := pyjson.Marshal(st.Output, pyjson.Canonical)
	if err != nil {
		return fmt.Errorf("encoding output: %w", err)
	}
	if want := expectedOutput[workload]; string(got) != want {
		return fmt.Errorf("output %s, want %s", got, want)
	}
	switch workload {
	case W1Chain:
		if st.WorkflowID != WorkflowW1 || st.CurrentNode != "n9" {
			return fmt.Errorf("workflow %s at node %s, want %s at n9", st.WorkflowID, st.CurrentNode, WorkflowW1)
		}
		for i := range W1Nodes {
			k := fmt.Sprintf("k%d", i)
			if st.Vars[k] != w1Value {
				return fmt.Errorf("vars[%q] = %v, want 32 × \"x\"", k, st.Vars[k])
			}
		}
	case W2AskResume:
		if err := checkVar(st, "answer", `{"text":"yes"}`); err != nil {
			return err
		}
	case W3Past:
		if err := checkVar(st, "woke", `{"ready":true,"until":"`+PastUntil+`"}`); err != nil {
			return err
		}
	case w3DueFellBack:
		woke, _ := st.Vars["woke"].(map[string]any)
		if woke["ready"] != true {
			return fmt.Errorf("vars.woke = %v, want the past-deadline result {ready: true, until}", st.Vars["woke"])
		}
	case W3Due:
		if _, ok := st.Vars["woke"]; ok {
			return fmt.Errorf("vars.woke = %v, want absent (the due path does not write it)", st.Vars["woke"])
		}
	}
	return nil
}

// w3DueFellBack is checkRun's name for a W3b run whose deadline had
// passed when its wait node's effect ran.
const w3DueFellBack = W3Due + "/fell_back"

func checkVar(st *durable.RunState, key, want string) error {
	got, err := pyjson.Marshal(st.Vars[key], pyjson.Canonical)
	if err != nil {
		return fmt.Errorf("encoding vars.%s: %w", key, err)
	}
	if string(got) != want {
		return fmt.Errorf("vars.%s = %s, want %s", key, got, want)
	}
	return nil
}

// checkLedger checks seqs 1…n and the terminal abstract.status event
// "completed" as the last record.
func checkLedger(recs []*durable.StepRecord) error {
	if len(recs) == 0 {
		return fmt.Errorf("empty")
	}
	for i, rec := range recs {
		if rec.Seq != int64(i+1) {
			return fmt.Errorf("record %d has seq %d", i+1, rec.Seq)
		}
	}
	last := recs[len(recs)-1]
	if !runtime.IsTerminalStatusRecord(last) || last.IdempotencyKey != runtime.TerminalStatusKey(durable.RunCompleted) {
		return fmt.Errorf("last record is not the terminal status event: node %s status %s", last.NodeID, last.Status)
	}
	return nil
}
