package jsonfile_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// A run whose vars the store accepts must read back after a reopen. vars
// holds arrays nested to the deepest level the encoder allows
// (pyjson.MaxDepth for the innermost array) with a scalar inside: the
// encoder checked depth only on containers, the decoder on every value,
// so the file could be written and the run then be unreadable; such a
// commit is refused.
func TestDeepVarsReadBack(t *testing.T) {
	dir := t.TempDir()
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var v any = []any{int64(1)}
	for i := 0; i < pyjson.MaxDepth-2; i++ { // innermost array at depth MaxDepth (run root 0, vars 1, "a" 2)
		v = []any{v}
	}
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{"a": v}}
	if err := pyjson.CheckMember(r.Vars, "vars", 1); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("the kernel's check of vars nested past the limit = %v; want nesting too deep", err)
	}
	if err := st.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err == nil {
		// Accepted: it must then read back.
		st.Close()
		again, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if _, err := again.RunGet(t.Context(), "r1"); err != nil {
			t.Fatalf("the store accepted the run's commit, but it no longer reads back: %v", err)
		}
		return
	}
	st.Close()
}
