package visualflow

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Listener run ids are <root>-listener-<index in FlowInfo.Listeners>. When
// the flow a root runs gains an on_event node ahead of an existing one
// (the bundle re-published under the same version, then the root driven
// again), the new listener's index is the one the old listener's run
// already holds: StartListeners reported the id conflict and never
// started the new listener, on every later call too.
func TestReviewListenerAddedBeforeAnExistingOneStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cb1, fi1 := compileEventFlow(t, eventsFlow, 1)
	extra := `{"id":"aaa","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"}],"eventConfig":{"name":"other","scope":"session"}}},
 {"id":"start","type":"on_flow_start"`
	flow2 := strings.Replace(eventsFlow, `{"id":"start","type":"on_flow_start"`, extra, 1)
	cb2, fi2 := compileEventFlow(t, flow2, 2)
	if fi2.WorkflowID != fi1.WorkflowID || fi2.Listeners[1] != fi1.Listeners[0] {
		t.Fatalf("setup: workflows %s/%s, listeners %v/%v", fi1.WorkflowID, fi2.WorkflowID, fi1.Listeners, fi2.Listeners)
	}
	rt := newTestRuntime(t, memory.New(), nil, cb1.Workflows...)
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi1.WorkflowID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fi1.StartListeners(ctx, rt, root, 0); err != nil {
		t.Fatal(err)
	}
	if err := cb2.Register(rt.Registry()); err != nil {
		t.Fatal(err)
	}
	ids, err := fi2.StartListeners(ctx, rt, root, 0)
	if err != nil {
		t.Fatalf("StartListeners after the flow gained a listener: %v", err)
	}
	runs, err := fi2.ListenerRuns(ctx, rt, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, wf := range fi2.Listeners {
		if len(runs[wf]) != 1 || runs[wf][0].Status != durable.RunWaiting {
			t.Fatalf("listener %s: runs %v (ids %v), want one waiting", wf, runs[wf], ids)
		}
	}
	// A second call finds both and starts nothing more.
	ids2, err := fi2.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids2) != 2 {
		t.Fatalf("second StartListeners = %v, %v", ids2, err)
	}
}
