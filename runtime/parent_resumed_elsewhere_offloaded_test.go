package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// The race of TestParentResumedElsewhereBeforeServingRunnerReadsItIsDriven
// behind the
// offloading decorator (spec §4.7, Python OffloadingLedgerStore), with a
// child output just under its threshold: each member of the parent's
// resume record is under it, their sum over it, so the record's whole
// effect payload is stored as {"$artifact": id}. Runner B recognises the
// resume runner A made (the parent's last ledger record) by the wait key
// in that payload: read as stored, it had none, and B left the parent
// running at its resume node, undriven.
func TestParentResumedElsewhereWithOffloadedResumeRecordIsDriven(t *testing.T) {
	for _, claims := range []bool{true, false} {
		t.Run(fmt.Sprintf("claims=%v", claims), func(t *testing.T) {
			parentResumedElsewhereOffloaded(t, claims)
		})
	}
}

func parentResumedElsewhereOffloaded(t *testing.T, claims bool) {
	const limit = 600
	ctx := context.Background()
	answer := strings.Repeat("x", limit-150)
	child := &runtime.Workflow{ID: "child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"answer": answer})
		}),
	}}
	shared := memory.New()
	arts := artifact.NewMemory()
	newRuntime := func(st store.Store, owner string, wfs ...*runtime.Workflow) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wfs...)
		if err != nil {
			t.Fatal(err)
		}
		cfg := runtime.Config{Store: offload.Wrap(st, arts, offload.Config{MaxInlineBytes: limit}), Registry: reg, Artifacts: arts}
		if claims {
			cfg.Claims = &runtime.Claims{Owner: owner, TTL: 30 * time.Second}
		}
		rt, err := runtime.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a := newRuntime(shared, "runner-a")
	bs := &afterGetStore{Store: shared}
	b := newRuntime(bs, "runner-b", waitingParent(true), child)
	pid, cid := parentWaitingOnChild(t, b, true)

	// B's first read of the ended child (its resume of the parent reads
	// the child before the parent) lets A hand the parent the end first.
	var h childEndHandOver
	bs.after = func(ctx context.Context, run *durable.RunState) {
		if run.RunID == cid && run.Status.Terminal() {
			h.notify(ctx, a, cid)
		}
	}
	cst, err := b.Tick(ctx, cid, runtime.TickOptions{})
	bs.after = nil
	if err != nil || cst.Status != durable.RunCompleted || !h.ran || h.err != nil {
		t.Fatalf("child driven by runner B: %v, %v (A notified: %v, %v); want completed", cst, err, h.ran, h.err)
	}
	// The premise: A's resume record is stored with its payload offloaded whole.
	recs, err := shared.LedgerList(ctx, &store.LedgerListParams{RunID: pid})
	if err != nil {
		t.Fatal(err)
	}
	var resume *durable.StepRecord
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			resume = r
		}
	}
	if resume == nil {
		t.Fatal("no resume record in the parent's ledger")
	}
	if _, isRef := artifact.RefID(resume.Effect.Payload); !isRef {
		t.Fatalf("resume record's effect payload stored as %v; want a ref (adjust the answer's size)", resume.Effect.Payload)
	}
	pst, err := b.GetState(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := pst.Output["sub"].(map[string]any)
	got, _ := out["output"].(map[string]any)
	if pst.Status != durable.RunCompleted || got["answer"] != answer {
		t.Fatalf("parent after runner B's call ended its child: %s at %q; want completed with the child's output",
			pst.Status, pst.CurrentNode)
	}
}
