// Package benchwork holds the benchmark workloads W1–W4 (and W3b) shared
// with the Python peer (see /work/shared/bench/README.md and
// docs/benchmarks.md): their workflows, the loops that run each workload
// for N runs on a store, timing only what the Python harness times, and
// the untimed verification of every run afterwards. A failed check is an
// error, never a number.
//
// The package is used by the `abstractgateway bench` command and by the
// Go benchmarks in its tests.
package benchwork

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Workflow ids, node ids and values of the workloads, exactly as in the
// Python harness.
const (
	WorkflowW1    = "bench_w1_chain"
	WorkflowW2    = "bench_w2_ask"
	WorkflowW3    = "bench_w3_past"
	WorkflowW3Due = "bench_w3_due"

	// W1Nodes is the length of the W1 chain.
	W1Nodes = 10
	// PastUntil is the WAIT_UNTIL deadline of W3.
	PastUntil = "2000-01-01T00:00:00+00:00"
	// DueDelay is how far ahead W3b's wait node sets its deadline.
	DueDelay = 250 * time.Millisecond
)

// w1Value is what every W1 node stores: 32 ASCII bytes. Python's nodes
// store a reference to one shared string; so do ours, boxed once here
// rather than at every store into the vars (a 16-byte allocation a step).
var w1Value any = strings.Repeat("x", 32)

// Workflows returns the four bench workflows; each node execution adds 1
// to steps.
func Workflows(steps *atomic.Int64) []*runtime.Workflow {
	return []*runtime.Workflow{w1Chain(steps), w2Ask(steps), w3Wait(steps, WorkflowW3, false), w3Wait(steps, WorkflowW3Due, true)}
}

// w1Chain: n0..n9; n<i> sets vars["k<i>"] = 32×"x"; n0..n8 move to
// n<i+1>, n9 completes {"ok": true, "nodes": 10}.
func w1Chain(steps *atomic.Int64) *runtime.Workflow {
	wf := &runtime.Workflow{ID: WorkflowW1, Entry: "n0", Nodes: map[string]runtime.NodeFunc{}}
	for i := range W1Nodes {
		key := "k" + strconv.Itoa(i)
		next := "n" + strconv.Itoa(i+1)
		last := i == W1Nodes-1
		wf.Nodes["n"+strconv.Itoa(i)] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			run.Vars[key] = w1Value
			if last {
				return runtime.Complete(map[string]any{"ok": true, "nodes": int64(W1Nodes)}), nil
			}
			return runtime.Next(next), nil
		}
	}
	return wf
}

// w2Ask: ask requests ASK_USER {"prompt": "Continue?"} into vars.answer
// and moves to done; done completes {"answer": vars.answer.text}.
func w2Ask(steps *atomic.Int64) *runtime.Workflow {
	return &runtime.Workflow{ID: WorkflowW2, Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			return runtime.Request(&durable.Effect{
				Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "Continue?"}, ResultKey: "answer",
			}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			ans, ok := run.Vars["answer"].(map[string]any)
			if !ok {
				return runtime.StepPlan{}, errors.New("vars.answer is missing")
			}
			return runtime.Complete(map[string]any{"answer": ans["text"]}), nil
		},
	}}
}

// w3Wait: wait requests WAIT_UNTIL into vars.woke and moves to done; done
// completes {"ok": true}. The deadline is PastUntil, or (due) the
// runtime clock + DueDelay computed when the node runs.
func w3Wait(steps *atomic.Int64, id string, due bool) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			until := PastUntil
			if due {
				until = durable.FormatTime(rc.Now().Add(DueDelay))
			}
			return runtime.Request(&durable.Effect{
				Type: durable.EffectWaitUntil, Payload: map[string]any{"until": until}, ResultKey: "woke",
			}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}
