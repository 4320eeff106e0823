package visualflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// FuzzCompileRunInvariants: any document fails to compile or runs to an
// end, a wait or its step budget, never a panic or a hang.
// For a fuzzed VisualFlow document (with optional start "vars", as in the
// golden files) it asserts:
//
//   - compiling is deterministic: the same document compiles twice to
//     the same outcome and error text; a compile error is a non-empty,
//     valid UTF-8 message that starts with "flow" and, when it blames a
//     node ("node X"), X is an id the document holds (or the message is
//     about an edge naming a missing node);
//   - Tick returns within a deadline and leaves the run completed,
//     failed (with a non-empty error), waiting, or running only because
//     MaxSteps was used up: ticking a running run again commits (its
//     version grows);
//   - the stored run equals what Tick returned, and its vars and output
//     are JSON the stores can persist (pyjson.Check);
//   - a completed run whose output reports success:false names an error;
//   - the ledger is well-formed: seqs 1..n, every record of this run, a
//     valid status, no record of a step after that step's terminal
//     record, and exactly one terminal abstract.status record, last, iff
//     the run has ended (none while it waits or runs).
func FuzzCompileRunInvariants(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		in, _, _ := bytes.Cut(raw, []byte("\n---\n"))
		f.Add(in)
	}
	f.Add([]byte(`{"flow": {"id": "x", "nodes": [{"id": "s", "type": "on_flow_start"}, {"id": "w", "type": "while", "data": {"pinDefaults": {"condition": true}}}], "edges": [{"source": "s", "sourceHandle": "exec-out", "target": "w", "targetHandle": "exec-in"}, {"source": "w", "sourceHandle": "loop", "target": "w", "targetHandle": "exec-in"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := pyjson.DecodeObject(data)
		if err != nil {
			return
		}
		var vars map[string]any
		if inner, ok := doc["flow"].(map[string]any); ok {
			vars, _ = doc["vars"].(map[string]any)
			doc = inner
		}
		flowText, err := pyjson.Marshal(doc, pyjson.Style{SortKeys: true, Compact: true, AllowNaN: true})
		if err != nil {
			return
		}
		ids := docIDs(doc)

		wf, cerr := compileWithDeadline(t, doc)
		doc2, _ := pyjson.DecodeObject(flowText)
		_, cerr2 := compileWithDeadline(t, doc2)
		if (cerr == nil) != (cerr2 == nil) || (cerr != nil && cerr.Error() != cerr2.Error()) {
			t.Fatalf("compile is nondeterministic:\n1: %v\n2: %v", cerr, cerr2)
		}
		if after, _ := pyjson.Marshal(doc, pyjson.Style{SortKeys: true, Compact: true, AllowNaN: true}); !bytes.Equal(after, flowText) {
			t.Fatalf("Compile mutated its document:\nbefore %s\nafter  %s", flowText, after)
		}
		if cerr != nil {
			checkCompileError(t, cerr, ids)
			return
		}

		reg, _ := runtime.NewRegistry(wf)
		st := memory.New()
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, MaxSteps: 200})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: vars})
		if err != nil {
			return // vars refused (named in the error)
		}
		prev := int64(-1)
		for tick := 0; ; tick++ {
			run, terr := tickWithDeadline(t, rt, id)
			stored, gerr := st.RunGet(ctx, id)
			if gerr != nil {
				t.Fatalf("RunGet after Tick: %v (tick error %v)", gerr, terr)
			}
			recs, lerr := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			if lerr != nil {
				t.Fatalf("LedgerList: %v", lerr)
			}
			if terr == nil && run != nil && run.Status != stored.Status {
				t.Fatalf("Tick returned status %s but the store holds %s", run.Status, stored.Status)
			}
			checkRun(t, stored, recs)
			if stored.Status != durable.RunRunning {
				return
			}
			// Still running: only a used-up step budget may leave it so,
			// and another Tick must make progress.
			if stored.Version <= prev {
				t.Fatalf("run stuck running: Tick %d committed nothing (version %d, tick error %v, %d records)\n%s", tick, stored.Version, terr, len(recs), strings.Join(ledgerKinds(recs), "\n"))
			}
			if tick >= 3 {
				return // an endless loop in the flow, progressing
			}
			prev = stored.Version
		}
	})
}

// docIDs collects the node ids and edge ids of a document.
func docIDs(doc map[string]any) map[string]bool {
	ids := map[string]bool{}
	for _, key := range []string{"nodes", "edges"} {
		list, _ := doc[key].([]any)
		for _, x := range list {
			m, _ := x.(map[string]any)
			if v, ok := m["id"]; ok && v != nil {
				// Named as the compiler reads it: str(id).strip().
				ids[pyval.Str(v)] = true
				ids[pyval.Strip(pyval.Str(v))] = true
			}
		}
	}
	return ids
}

func compileWithDeadline(t *testing.T, doc map[string]any) (*runtime.Workflow, error) {
	t.Helper()
	type res struct {
		wf  *runtime.Workflow
		err error
	}
	ch := make(chan res, 1)
	go func() {
		wf, err := Compile(doc, CompileOptions{WorkflowID: "fuzz"})
		ch <- res{wf, err}
	}()
	select {
	case r := <-ch:
		return r.wf, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("Compile did not return within 20s")
	}
	return nil, nil
}

func tickWithDeadline(t *testing.T, rt *runtime.Runtime, id string) (*durable.RunState, error) {
	t.Helper()
	type res struct {
		st  *durable.RunState
		err error
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan res, 1)
	go func() {
		st, err := rt.Tick(ctx, id, runtime.TickOptions{})
		ch <- res{st, err}
	}()
	select {
	case r := <-ch:
		return r.st, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("Tick did not return within 20s (context deadline 10s ignored)")
	}
	return nil, nil
}

func checkCompileError(t *testing.T, err error, ids map[string]bool) {
	t.Helper()
	msg := err.Error()
	if strings.TrimSpace(msg) == "" || !utf8.ValidString(msg) {
		t.Fatalf("compile error text %q is empty or not UTF-8", msg)
	}
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("compile error %q (%T) is not a *CompileError naming flow/node/pin", msg, err)
	}
	if ce.Flow == "" && !strings.Contains(ce.Msg, "has no id") {
		t.Fatalf("compile error %q does not name the flow", msg)
	}
	if ce.Node != "" && !ids[ce.Node] && !strings.Contains(ce.Msg, "edge") {
		t.Fatalf("compile error %q blames node %q, which the document does not hold", msg, ce.Node)
	}
}

func checkRun(t *testing.T, run *durable.RunState, recs []*durable.StepRecord) {
	t.Helper()
	if !run.Status.Valid() {
		t.Fatalf("run status %q is not valid", run.Status)
	}
	if run.Status == durable.RunFailed && strings.TrimSpace(run.Error) == "" {
		t.Fatalf("failed run has no error")
	}
	if run.Status == durable.RunWaiting && run.Waiting == nil {
		t.Fatalf("waiting run has no wait state")
	}
	if err := pyjson.Check(run.Vars, "vars"); err != nil {
		t.Fatalf("stored vars are not JSON: %v", err)
	}
	if err := pyjson.Check(run.Output, "output"); err != nil {
		t.Fatalf("stored output is not JSON: %v", err)
	}
	if run.Status == durable.RunCompleted {
		if out := run.Output; out != nil && out["success"] == false {
			e, ok := out["error"]
			if !ok {
				e, ok = out["response"] // the agent's configuration error
			}
			if !ok || e == nil || fmt.Sprint(e) == "" {
				t.Fatalf("completed run reports success:false without an error: %s", jsonText(t, out))
			}
		}
	}
	ended := map[string]int64{}
	terminal := 0
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d\n%s", i, r.Seq, strings.Join(ledgerKinds(recs), "\n"))
		}
		if r.RunID != run.RunID {
			t.Fatalf("record %d belongs to run %q, not %q", r.Seq, r.RunID, run.RunID)
		}
		switch r.Status {
		case durable.StepStarted, durable.StepWaiting, durable.StepCompleted, durable.StepFailed, durable.StepCancelled:
		default:
			t.Fatalf("record %d has status %q", r.Seq, r.Status)
		}
		if at, ok := ended[r.StepID]; ok {
			t.Fatalf("record %d (%s %s) of step %s follows that step's terminal record %d\n%s", r.Seq, r.Status, r.NodeID, r.StepID, at, strings.Join(ledgerKinds(recs), "\n"))
		}
		if r.Status == durable.StepCompleted || r.Status == durable.StepFailed || r.Status == durable.StepCancelled {
			ended[r.StepID] = r.Seq
		}
		if runtime.IsTerminalStatusRecord(r) {
			terminal++
			if i != len(recs)-1 {
				t.Fatalf("terminal status record %d is not last (%d records)\n%s", r.Seq, len(recs), strings.Join(ledgerKinds(recs), "\n"))
			}
		}
	}
	want := 0
	if run.Status.Terminal() {
		want = 1
	}
	if terminal != want {
		t.Fatalf("run %s has %d terminal status records, want %d\n%s", run.Status, terminal, want, strings.Join(ledgerKinds(recs), "\n"))
	}
}
