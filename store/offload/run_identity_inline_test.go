package offload_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A Start naming an existing run id compares the stored run's identity
// (vars._meta.occurrence and vars._meta.creation_digest, runtime/start.go
// checkIdentity; Python's verify_run_identity in core/run_identity.py)
// with the one it would create. Spec runtime-model §4.7 says identity keys
// under vars._meta are never offloaded; the decorator offloaded them once
// the run was terminal and the threshold was under their size (the digest
// is 71 bytes), so the second Start compared a ref with the digest and
// failed with an identity conflict.
func TestRunIdentityMembersStayInlineUnderTinyThreshold(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "end", Nodes: map[string]runtime.NodeFunc{
		"end": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	inner := memory.New()
	arts := artifact.NewMemory()
	rt, err := runtime.New(runtime.Config{Store: offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: 8}), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	params := func() runtime.StartParams {
		return runtime.StartParams{WorkflowID: "w", RunID: "nightly-2026-01-01", SessionID: "s1",
			Vars: map[string]any{
				"_meta": map[string]any{
					// An object, so that its members (not only the value
					// itself) are candidates for offloading.
					"occurrence": map[string]any{"schedule": "nightly", "at": "2026-01-01T00:00:00+00:00"},
					"note":       strings.Repeat("n", 40), // not identity: may be offloaded
				},
				"topic": "weather",
			}}
	}
	id, err := rt.Start(ctx, params())
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v, %v", run, err)
	}

	stored, err := inner.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := stored.Vars["_meta"].(map[string]any)
	if d, ok := meta["creation_digest"].(string); !ok || !strings.HasPrefix(d, "sha256:") {
		t.Errorf("stored vars._meta.creation_digest = %v, want the digest inline", meta["creation_digest"])
	}
	if occ, _ := meta["occurrence"].(map[string]any); occ["at"] != "2026-01-01T00:00:00+00:00" || occ["schedule"] != "nightly" {
		t.Errorf("stored vars._meta.occurrence = %v, want it inline as given", meta["occurrence"])
	}
	if _, ok := meta["note"].(string); ok {
		t.Errorf("vars._meta.note (40 bytes, threshold 8) stayed inline; only the identity members are exempt")
	}

	again, err := rt.Start(ctx, params())
	var conflict *runtime.IdentityConflictError
	if errors.As(err, &conflict) {
		t.Fatalf("second Start with the same identity: %v (stored %s, given %s)", err, conflict.Stored, conflict.Given)
	}
	if err != nil || again != id {
		t.Fatalf("second Start = %q, %v; want the existing run %q", again, err, id)
	}

	// A different identity still conflicts: the members are compared, not skipped.
	p := params()
	p.Vars["topic"] = "tides"
	if _, err := rt.Start(ctx, p); !errors.As(err, &conflict) {
		t.Errorf("Start with other vars under the same run id: %v, want an identity conflict", err)
	}
}
