package runtime_test

// Ids and keys that are not UTF-8 (a Go host can build them) are refused
// where they enter: JSON text cannot hold them, so a store would read
// back U+FFFD in their place and look-ups by them would miss.

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func TestStartRefusesIDsNotUTF8(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []runtime.StartParams{
		{WorkflowID: "w", RunID: "r\xff"},
		{WorkflowID: "w", SessionID: "s\xfe"},
		{WorkflowID: "w", ActorID: "\xc3"},
		{WorkflowID: "w", ParentRunID: "p\xff"},
	} {
		if _, err := rt.Start(ctx, p); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("Start(%+v) = %v, want a refusal naming the invalid UTF-8", p, err)
		}
	}
	if runs, _ := st.RunList(ctx, &store.RunListParams{}); len(runs) != 0 {
		t.Errorf("%d runs stored by refused starts", len(runs))
	}
}

func TestRegistryRefusesIDsNotUTF8(t *testing.T) {
	node := func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(nil), nil
	}
	for _, wf := range []*runtime.Workflow{
		{ID: "w\xff", Entry: "a", Nodes: map[string]runtime.NodeFunc{"a": node}},
		{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{"a": node, "b\xff": node}},
	} {
		if _, err := runtime.NewRegistry(wf); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("NewRegistry(%q) = %v, want a refusal", wf.ID, err)
		}
	}
}

// TestEffectKeysNotUTF8WaitAsStored: an effect's payload reaches its
// handler in the types a read gives, its invalid bytes as U+FFFD, so the
// wait key a run waits under is the one every store reads back. An event
// emitted from outside with such a name is refused.
func TestEffectKeysNotUTF8WaitAsStored(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "?", "wait_key": "k\xff"}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunWaiting || got.Waiting.WaitKey != "k\uFFFD" {
		t.Fatalf("run %s waiting on %q, want waiting on %q", got.Status, got.Waiting.WaitKey, "k\uFFFD")
	}
	if _, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping\xff", SessionID: "s"}); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("EmitEvent of a name not UTF-8 = %v, want a refusal", err)
	}
}

func TestCommandAppendRefusesIDsNotUTF8(t *testing.T) {
	st := memory.New()
	for _, c := range []*durable.CommandRecord{
		{CommandID: "c\xff", RunID: "r", Type: "cancel"},
		{RunID: "r\xff", Type: "cancel"},
		{RunID: "r", Type: "cancel\xff"},
		{RunID: "r", Type: "cancel", ClientID: "\xfe"},
	} {
		if _, err := st.CommandAppend(context.Background(), c); !errors.Is(err, store.ErrInvalidCommand) {
			t.Errorf("CommandAppend(%+v) = %v, want ErrInvalidCommand", c, err)
		}
	}
}
