package history_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stepClock is a clock that moves 1ms forward at every reading, so that
// every timestamp the runtime writes is distinct and ordered.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *stepClock {
	return &stepClock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// node adapts a plan-returning function to a runtime.NodeFunc.
func node(f func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return f(run), nil
	}
}

func effect(t durable.EffectType, payload map[string]any, resultKey string) *durable.Effect {
	return &durable.Effect{Type: t, Payload: payload, ResultKey: resultKey}
}

func wf(id, entry string, nodes map[string]runtime.NodeFunc) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: entry, Nodes: nodes}
}

func complete(out map[string]any) runtime.NodeFunc {
	return node(func(*durable.RunState) runtime.StepPlan { return runtime.Complete(out) })
}

// workflows is every workflow the tests run.
func workflows() []*runtime.Workflow {
	startAsync := func(child string, wait bool, next string) runtime.NodeFunc {
		return node(func(*durable.RunState) runtime.StepPlan {
			return runtime.Request(effect(durable.EffectStartSubworkflow,
				map[string]any{"workflow_id": child, "async": true, "wait": wait}, "_temp.child_"+child), next)
		})
	}
	llm := func(prompt, next string) runtime.NodeFunc {
		return node(func(*durable.RunState) runtime.StepPlan {
			return runtime.Request(effect(durable.EffectLLMCall, map[string]any{"prompt": prompt}, "_temp.llm"), next)
		})
	}
	return []*runtime.Workflow{
		// A parent waiting on an async child that asks a person.
		wf("parent", "spawn", map[string]runtime.NodeFunc{
			"spawn": node(func(*durable.RunState) runtime.StepPlan {
				return runtime.Request(effect(durable.EffectStartSubworkflow,
					map[string]any{"workflow_id": "asker", "async": true, "wait": true}, "child"), "done")
			}),
			"done": node(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"child": run.Vars["child"]})
			}),
		}),
		wf("asker", "ask", map[string]runtime.NodeFunc{
			"ask": node(func(*durable.RunState) runtime.StepPlan {
				return runtime.Request(effect(durable.EffectAskUser,
					map[string]any{"prompt": "Continue?", "choices": []any{"yes", "no"}}, "answer"), "done")
			}),
			"done": node(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"answer": run.Vars["answer"]})
			}),
		}),
		// A tree three levels deep: root → 2 × mid → leafy → leaf.
		wf("tree", "a", map[string]runtime.NodeFunc{
			"a": startAsync("mid", false, "b"),
			"b": startAsync("mid", false, "c"),
			"c": complete(map[string]any{}),
		}),
		wf("mid", "a", map[string]runtime.NodeFunc{
			"a": startAsync("leafy", false, "c"),
			"c": complete(map[string]any{}),
		}),
		wf("leafy", "a", map[string]runtime.NodeFunc{
			"a": startAsync("leaf", false, "c"),
			"c": complete(map[string]any{}),
		}),
		wf("leaf", "a", map[string]runtime.NodeFunc{"a": complete(map[string]any{})}),
		// Five LLM calls: 12 records.
		wf("loop", "step", map[string]runtime.NodeFunc{
			"step": node(func(run *durable.RunState) runtime.StepPlan {
				i, _ := pyval.ToInt(run.Vars["i"])
				if i >= 5 {
					return runtime.Complete(map[string]any{"count": i})
				}
				run.Vars["i"] = i + 1
				return runtime.Request(effect(durable.EffectLLMCall,
					map[string]any{"prompt": fmt.Sprintf("p%d", i)}, "_temp.llm"), "step")
			}),
		}),
		// A chat turn: an LLM call, two tool calls, a helper subworkflow
		// with its own LLM call, then an answer in the output.
		wf("chat", "think", map[string]runtime.NodeFunc{
			"think": llm("think", "tools"),
			"tools": node(func(*durable.RunState) runtime.StepPlan {
				return runtime.Request(effect(durable.EffectToolCalls, map[string]any{
					"tool_calls": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}},
				}, "_temp.tools"), "sub")
			}),
			"sub": node(func(*durable.RunState) runtime.StepPlan {
				return runtime.Request(effect(durable.EffectStartSubworkflow,
					map[string]any{"workflow_id": "helper"}, "_temp.sub"), "done")
			}),
			"done": complete(map[string]any{"response": " final answer ", "meta": map[string]any{"model": "m"}}),
		}),
		wf("helper", "a", map[string]runtime.NodeFunc{
			"a": llm("help", "b"),
			"b": complete(map[string]any{}),
		}),
		// A chat turn whose answer is only in its ledger (ANSWER_USER).
		wf("chat_answer", "say", map[string]runtime.NodeFunc{
			"say": node(func(*durable.RunState) runtime.StepPlan {
				return runtime.Request(effect(durable.EffectAnswerUser, map[string]any{"message": "hi there"}, ""), "done")
			}),
			"done": complete(map[string]any{"ok": true}),
		}),
		wf("job", "a", map[string]runtime.NodeFunc{"a": complete(map[string]any{"answer": "done."})}),
		wf("__internal__", "a", map[string]runtime.NodeFunc{"a": complete(map[string]any{"answer": "secret"})}),
		wf("scheduled:daily", "a", map[string]runtime.NodeFunc{"a": complete(map[string]any{"text": "report"})}),
		// A run whose values exceed a small offload threshold.
		wf("bigout", "a", map[string]runtime.NodeFunc{
			"a": llm("big", "b"),
			"b": complete(map[string]any{
				"answer": "the big answer",
				"k1":     strings.Repeat("1", 80), "k2": strings.Repeat("2", 80), "k3": strings.Repeat("3", 80),
			}),
		}),
	}
}

// bigContent is the LLM reply to the prompt "big".
var bigContent = strings.Repeat("B", 300)

// llmHandler answers every prompt with fixed token usage.
func llmHandler(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
	prompt, _ := req.Effect.Payload["prompt"].(string)
	content := "reply to " + prompt
	if prompt == "big" {
		content = bigContent
	}
	return runtime.Completed(map[string]any{
		"content": content,
		"usage":   map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
	}), nil
}

func toolHandler(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
	return runtime.Completed(map[string]any{"results": []any{}}), nil
}

// newRuntime returns a runtime over st with every test workflow and the
// LLM and tool handlers.
func newRuntime(t *testing.T, st store.Store, arts artifact.Store, clock *stepClock) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(workflows()...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{
		Store: st, Registry: reg, Artifacts: arts, Clock: clock.Now,
		Handlers: map[durable.EffectType]runtime.Handler{
			durable.EffectLLMCall:   {Func: llmHandler},
			durable.EffectToolCalls: {Func: toolHandler},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// startTick starts a run and ticks it until it waits or ends.
func startTick(t *testing.T, rt *runtime.Runtime, p runtime.StartParams) string {
	t.Helper()
	ctx := context.Background()
	id, err := rt.Start(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	return id
}

func state(t *testing.T, rt *runtime.Runtime, id string) *durable.RunState {
	t.Helper()
	r, err := rt.GetState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// children returns the ids of a run's children, oldest first.
func children(t *testing.T, st store.RunStore, id string) []string {
	t.Helper()
	kids, err := st.RunListChildren(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.RunID)
	}
	return ids
}

// Accessors over a bundle (a decoded JSON tree).

func obj(t *testing.T, v any, path string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T %v", path, v, v)
	}
	return m
}

func list(t *testing.T, v any, path string) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want a list, got %T %v", path, v, v)
	}
	return l
}

func num(t *testing.T, v any, path string) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%s: want a number, got %T %v", path, v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return i
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ledgerOf(t *testing.T, bundle map[string]any, runID string) map[string]any {
	t.Helper()
	return obj(t, obj(t, bundle["ledgers"], "ledgers")[runID], "ledgers."+runID)
}

// cursors returns the cursors of a ledger section's items.
func cursors(t *testing.T, ledger map[string]any) []int64 {
	t.Helper()
	var out []int64
	for i, it := range list(t, ledger["items"], "items") {
		out = append(out, num(t, obj(t, it, "item")["cursor"], fmt.Sprintf("items[%d].cursor", i)))
	}
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// wire is a value as a bundle carries it: normalised JSON.
func wire(t *testing.T, v any) any {
	t.Helper()
	n, err := pyjson.Normalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkRecords compares a ledger section's records with the store's
// records from cursor `from` on.
func checkRecords(t *testing.T, st store.LedgerStore, ledger map[string]any, runID string, from int64) {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	items := list(t, ledger["items"], "items")
	if want := int64(len(recs)) - from + 1; int64(len(items)) != want {
		t.Fatalf("run %s: %d items, want %d", runID, len(items), want)
	}
	for i, it := range items {
		got := obj(t, it, "item")["record"]
		if want := wire(t, recs[from-1+int64(i)].JSONValue(true)); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %s item %d:\n got %v\nwant %v", runID, i, got, want)
		}
	}
}

// completedRun is a completed run of workflow "w" under parent ("" for
// none), created and updated at at.
func completedRun(id, parent string, at time.Time) *durable.RunState {
	return &durable.RunState{RunID: id, WorkflowID: "w", Status: durable.RunCompleted, CurrentNode: "n",
		Vars: map[string]any{}, ParentRunID: parent, CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at)}
}

// putRunAsIs creates r in st as it is (times included).
func putRunAsIs(t *testing.T, st store.RunStore, r *durable.RunState) {
	t.Helper()
	if r.Vars == nil {
		r.Vars = map[string]any{}
	}
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
}
