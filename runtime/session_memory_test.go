package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// EnsureSessionMemoryRun creates the synthetic owner run of gateway-api
// §3.12 once, and leaves an existing one as it is.
func TestEnsureSessionMemoryRun(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := errRuntime(t, st, Config{})
	id, err := rt.EnsureSessionMemoryRun(ctx, " s1 ")
	if err != nil || id != "session_memory_s1" {
		t.Fatalf("EnsureSessionMemoryRun = %q, %v; want session_memory_s1", id, err)
	}
	run, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	vars, _ := pyjson.Marshal(run.Vars, pyjson.Canonical)
	output, _ := pyjson.Marshal(run.Output, pyjson.Canonical)
	const wantVars = `{"_limits":{},"_runtime":{"memory_spans":[]},"_temp":{},"context":{"messages":[],"task":""},"scratchpad":{}}`
	if run.WorkflowID != SessionMemoryWorkflowID || run.Status != durable.RunCompleted || run.CurrentNode != "done" ||
		run.SessionID != "s1" || run.ActorID != "" || string(vars) != wantVars || string(output) != `{"messages":[]}` {
		t.Fatalf("owner run: workflow %q status %s node %q session %q actor %q vars %s output %s; want the §3.12 shape",
			run.WorkflowID, run.Status, run.CurrentNode, run.SessionID, run.ActorID, vars, output)
	}

	// An existing owner is left as it is.
	if err := rt.UpdateVars(ctx, id, func(v map[string]any) (bool, error) { v["kept"] = true; return true, nil }); err != nil {
		t.Fatal(err)
	}
	before, _ := st.RunGet(ctx, id)
	if again, err := rt.EnsureSessionMemoryRun(ctx, "s1"); err != nil || again != id {
		t.Fatalf("second EnsureSessionMemoryRun = %q, %v", again, err)
	}
	after, _ := st.RunGet(ctx, id)
	if after.Version != before.Version || after.Vars["kept"] != true {
		t.Errorf("an existing owner changed: version %d → %d, kept %v", before.Version, after.Version, after.Vars["kept"])
	}

	if id, err := rt.EnsureSessionMemoryRun(ctx, "a b"); err != nil || id != SessionMemoryRunID("a b") || len(id) != len("session_memory_sha_")+32 {
		t.Errorf("unsafe session id: %q, %v; want the sha form", id, err)
	}
	if _, err := rt.EnsureSessionMemoryRun(ctx, "  "); err == nil {
		t.Error("blank session id: no error")
	}
}

// unreadableRow is a store that holds a row under id it cannot read, as
// SQLite and PostgreSQL read an undecodable run_json: absent to a load,
// present to a create.
type unreadableRow struct {
	store.Wrapper
	id string
}

func (u *unreadableRow) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if runID == u.id {
		return nil, store.ErrNotFound
	}
	return u.Wrapper.RunGet(ctx, runID)
}

func (u *unreadableRow) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.RunID == u.id && p.Create {
		return store.ErrAlreadyExists
	}
	return u.Wrapper.RunCommit(ctx, p)
}

func TestEnsureSessionMemoryRunRefusesWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	rt := errRuntime(t, &unreadableRow{Wrapper: store.Wrapper{Store: memory.New()}, id: "session_memory_s1"}, Config{})
	if id, err := rt.EnsureSessionMemoryRun(ctx, "s1"); err == nil || !strings.Contains(err.Error(), "unreadable") {
		t.Errorf("owner row the store cannot read: %q, %v; want an error saying it is unreadable", id, err)
	}
	if id, err := rt.EnsureSessionMemoryRun(ctx, "s\xff"); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("session id that is not UTF-8: %q, %v; want an error", id, err)
	}
}
