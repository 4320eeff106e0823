package memory_test

// The memory store keeps values as a durable store would: deep copies in
// the decoder's Go types, and a refusal of what no durable store can
// encode. Each test's comment states the rule and describes the bug it
// guards against.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestCommandPayloadIsCopiedAndNormalized: the package doc
// promises deep copies ("a caller's later mutation never leaks into the
// stored state") and reads in the decoder's Go types ("what a durable
// store would read back from disk"). The bug this guards against:
// CommandAppend kept pyjson.CloneObject(c.Payload), which shares every
// value that is not a map[string]any or []any (a []string, a
// map[string]string...) and keeps Go ints and invalid UTF-8 as given: the
// caller's later change showed in CommandListAfter, and the payload read
// differed from what the SQLite store (pyjson.DecodeObject of
// payload_json) reads back.
func TestCommandPayloadIsCopiedAndNormalized(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	tags := []string{"a"}
	payload := map[string]any{"n": 5, "tags": tags, "bad": "x\xff"}
	b, err := pyjson.Marshal(payload, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pyjson.DecodeObject(b) // what a durable store reads back
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "resume", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	tags[0] = "changed by the caller after the append"
	got, _, err := s.CommandListAfter(ctx, 0, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("list: %v, %v", got, err)
	}
	if !reflect.DeepEqual(got[0].Payload, want) {
		t.Errorf("payload read back = %#v\nwant (as a durable store reads it) %#v", got[0].Payload, want)
	}
}

// tooDeepValue is a value nested past the encoder's limit (10000 levels):
// no durable store can write it.
func tooDeepValue() any {
	v := any("leaf")
	for range 10050 {
		v = []any{v}
	}
	return v
}

// TestRefusesWhatNoDurableStoreCanWrite: a run whose vars
// nest past the encoder's depth limit (or a record whose result does)
// is refused by the durable stores ("nesting too deep"), and
// frozen.NewStoredRun promises "An r that cannot be encoded is an error
// naming the offending value's path". The memory store refuses them too.
// The bug this guards against: its one-pass freeze never checked the
// depth, so it accepted both, and later reads handed out a state no other
// store could have kept.
func TestRefusesWhatNoDurableStoreCanWrite(t *testing.T) {
	ctx := context.Background()
	js, err := jsonfile.New(jsonfile.Config{Dir: filepath.Join(t.TempDir(), "js"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	for _, tc := range []struct {
		name string
		s    store.Store
	}{{"jsonfile", js}, {"memory", memory.New()}} {
		r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
			Vars: map[string]any{"deep": tooDeepValue()}}
		if err := tc.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err == nil {
			t.Errorf("%s: RunCommit of vars nested past the encoder's limit succeeded; want the encoder's error", tc.name)
		}
		rec := &durable.StepRecord{RunID: "r2", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Result: tooDeepValue()}
		if err := tc.s.LedgerAppend(ctx, "r2", []*durable.StepRecord{rec}); err == nil {
			t.Errorf("%s: LedgerAppend of a result nested past the encoder's limit succeeded; want the encoder's error", tc.name)
		}
	}
}

// TestCyclicVarsAreAnError: a cyclic value cannot be
// encoded; the JSON store's commit returns the encoder's error ("cycle"),
// and frozen.NewStoredRun promises an error for an r that cannot be
// encoded; the memory store's RunCommit returns an error too. The bug this
// guards against: it recursed without end in frozen's normalizedObject and
// the process died of a fatal stack overflow (not recoverable). Run in a
// child process so that the crash does not take the other tests down.
func TestCyclicVarsAreAnError(t *testing.T) {
	if os.Getenv("MEMORY_TEST_CYCLE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCyclicVarsAreAnError$")
		cmd.Env = append(os.Environ(), "MEMORY_TEST_CYCLE_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			if len(out) > 600 {
				out = out[:600]
			}
			t.Fatalf("RunCommit of cyclic vars killed the process (%v):\n%s", err, out)
		}
		return
	}
	debug.SetMaxStack(32 << 20) // fail fast rather than grow a 1 GB stack
	vars := map[string]any{}
	vars["self"] = vars
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n", Vars: vars}
	if err := memory.New().RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true}); err == nil {
		t.Fatal("RunCommit of cyclic vars succeeded; want the encoder's error")
	}
}
