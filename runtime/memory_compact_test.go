package runtime_test

// MEMORY_COMPACT (spec §3.8, Python's Runtime._handle_memory_compact):
// the older part of context.messages is summarised by a child run of
// wf_memory_compact_llm (one LLM_CALL), archived as a conversation_span
// artifact and replaced by one system summary message.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// scriptedLLM is an LLM_CALL handler answering content, recording the
// payloads it was sent; onCall, when set, runs inside each call (its
// 1-based number given) before it answers.
type scriptedLLM struct {
	mu       sync.Mutex
	content  any
	payloads []map[string]any
	runs     []*durable.RunState
	onCall   func(n int)
}

func (l *scriptedLLM) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.payloads = append(l.payloads, req.Effect.Payload)
		l.runs = append(l.runs, req.Run)
		if l.onCall != nil {
			l.onCall(len(l.payloads))
		}
		return runtime.Completed(map[string]any{"content": l.content, "model": "scripted"}), nil
	}}
}

func (l *scriptedLLM) calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.payloads)
}

// compactRuntime is a runtime over st with an artifact store, the "mem"
// workflows and, unless llm is nil, the scripted LLM_CALL handler.
func compactRuntime(t *testing.T, st store.Store, arts artifact.Store, llm *scriptedLLM) *runtime.Runtime {
	t.Helper()
	return retryingCompactRuntime(t, st, arts, llm, 0)
}

// retryingCompactRuntime is compactRuntime with a retry policy of
// attempts tries per effect (0: the default) and no wait between them.
func retryingCompactRuntime(t *testing.T, st store.Store, arts artifact.Store, llm *scriptedLLM, attempts int) *runtime.Runtime {
	t.Helper()
	// once compacts with the payload of vars.payload, then completes; a
	// replay's tests use it (the "mem" workflow counts its steps in a
	// var a store round trip retypes).
	once := &runtime.Workflow{ID: "compact-once", Entry: "compact", Nodes: map[string]runtime.NodeFunc{
		"compact": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			p, _ := run.Vars["payload"].(map[string]any)
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryCompact, Payload: p, ResultKey: "r0"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(append(memWorkflows(), once)...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := runtime.Config{Store: st, Registry: reg, Artifacts: arts, Clock: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}}
	if attempts > 0 {
		cfg.Policy = runtime.RetryPolicy{DefaultAttempts: attempts}
		cfg.Sleep = func(ctx context.Context, d time.Duration) error { return nil }
	}
	if llm != nil {
		cfg.Handlers = map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}
	}
	rt, err := runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// startMem starts a "mem" run with vars and steps.
func startMem(t *testing.T, rt *runtime.Runtime, vars map[string]any, steps ...map[string]any) string {
	t.Helper()
	v := map[string]any{"steps": toAnyList(steps)}
	for k, x := range vars {
		v[k] = x
	}
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "mem", Vars: v, ActorID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// startOnce starts a "compact-once" run over messages.
func startOnce(t *testing.T, rt *runtime.Runtime, messages []any) string {
	t.Helper()
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "compact-once", Vars: map[string]any{
		"context": map[string]any{"messages": messages}, "payload": map[string]any{},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func toAnyList(steps []map[string]any) []any {
	out := make([]any, len(steps))
	for i, s := range steps {
		out[i] = s
	}
	return out
}

func tickDone(t *testing.T, rt *runtime.Runtime, id string) *durable.RunState {
	t.Helper()
	run, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// conversation is a system prompt and n user/assistant turns; the first
// two carry ids and timestamps, the others none.
func conversation(n int) []any {
	msgs := []any{map[string]any{"role": "system", "content": "You are helpful."}}
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m := map[string]any{"role": role, "content": fmt.Sprintf("turn %d", i)}
		if i < 2 {
			m["timestamp"] = fmt.Sprintf("2026-01-01T00:00:0%d+00:00", i)
			m["metadata"] = map[string]any{"message_id": fmt.Sprintf("m%d", i)}
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func messagesOf(run *durable.RunState) []any {
	c, _ := run.Vars["context"].(map[string]any)
	l, _ := c["messages"].([]any)
	return l
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With no messages, or no more non-system messages than preserve_recent,
// the effect completes at once with Python's words (no meta), and needs no
// LLM.
func TestMemoryCompactEarlyAnswers(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{
		"context": map[string]any{"messages": []any{}}}},
		step(durable.EffectMemoryCompact, map[string]any{}))
	mustComplete(t, run)
	r := res(t, run, 0)
	if r["success"] != true || r["output"] != "No messages to compact." || r["name"] != "compact_memory" ||
		r["call_id"] != "memory" || r["error"] != nil {
		t.Errorf("MEMORY_COMPACT with no messages answered %v; want success, output \"No messages to compact.\", "+
			"name compact_memory, call_id memory", r)
	}
	if _, has := r["meta"]; has {
		t.Errorf("early answer has a meta member: %v (Python's has none)", r)
	}

	run = f.runSteps(t, runtime.StartParams{Vars: map[string]any{
		"context": map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "hi"},
			map[string]any{"role": "assistant", "content": "hello"},
		}}}},
		step(durable.EffectMemoryCompact, map[string]any{}))
	mustComplete(t, run)
	r = res(t, run, 0)
	if want := "Nothing to compact (non-system messages <= preserve_recent=6)."; r["success"] != true || r["output"] != want {
		t.Errorf("MEMORY_COMPACT with 2 messages answered %v; want success, output %q", r, want)
	}

	// preserve_recent 0 is Python's `int(x or 6)`: 6 again; a negative
	// one is 0, which compacts everything but the system messages.
	run = f.runSteps(t, runtime.StartParams{Vars: map[string]any{
		"context": map[string]any{"messages": []any{map[string]any{"role": "system", "content": "sys"}}}}},
		step(durable.EffectMemoryCompact, map[string]any{"preserve_recent": -3, "tool_name": "squash", "call_id": "c1"}))
	mustComplete(t, run)
	r = res(t, run, 0)
	if want := "Nothing to compact (non-system messages <= preserve_recent=0)."; r["output"] != want ||
		r["name"] != "squash" || r["call_id"] != "c1" {
		t.Errorf("system messages only, preserve_recent -3: %v; want %q named squash/c1", r, want)
	}
}

// A full compaction: the child run's LLM is sent Python's prompt; the
// older messages are archived with their span and tags; context.messages
// becomes system + summary + recent; the span is indexed; the meta names
// the child, the span and the summary message.
func TestMemoryCompactSummarisesArchivesAndReplaces(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	llm := &scriptedLLM{content: "```json\n{\"summary\": \" Alice chose blue/green. \", " +
		"\"key_points\": [\"blue/green\", 3, 1.5, true, null, {\"x\": 1}], \"confidence\": 0.8}\n```"}
	st := memory.New()
	rt := compactRuntime(t, st, arts, llm)
	id := startMem(t, rt, map[string]any{
		"context": map[string]any{"messages": conversation(8)},
		"_limits": map[string]any{"max_output_tokens": 512},
	}, step(durable.EffectMemoryCompact, map[string]any{
		"preserve_recent": 2, "compression_mode": " HEAVY ", "focus": " deploys ",
	}))
	run := tickDone(t, rt, id)
	mustComplete(t, run)

	// The LLM call.
	if llm.calls() != 1 {
		t.Fatalf("LLM called %d times, want 1", llm.calls())
	}
	wantPrompt := "You are compressing older conversation context for an agent runtime.\n" +
		"Write a faithful, compact summary that preserves decisions, constraints, names, file paths, commands, and open questions.\n" +
		"Do NOT invent details. If something is unknown, say so.\n" +
		"Compression mode: heavy\n" +
		"Focus: deploys\n" +
		"Return STRICT JSON with keys: summary (string), key_points (array of strings), confidence (number 0..1).\n\n" +
		"OLDER MESSAGES (to be archived):\n" +
		"user: turn 0\nassistant: turn 1\nuser: turn 2\nassistant: turn 3\nuser: turn 4\nassistant: turn 5\n"
	if got := llm.payloads[0]["prompt"]; got != wantPrompt {
		t.Errorf("prompt:\n%v\nwant:\n%s", got, wantPrompt)
	}
	if got := jsonOf(t, llm.payloads[0]["params"]); got != `{"max_tokens":512}` {
		t.Errorf("params = %s, want max_tokens from _limits.max_output_tokens", got)
	}
	child := llm.runs[0]
	if child.WorkflowID != runtime.CompactionLLMWorkflowID || child.ParentRunID != id || child.ActorID != "alice" {
		t.Errorf("LLM ran in run %s (workflow %s, parent %s, actor %s); want a wf_memory_compact_llm child of %s",
			child.RunID, child.WorkflowID, child.ParentRunID, child.ActorID, id)
	}

	// The result.
	r := res(t, run, 0)
	meta := metaOf(t, r)
	spanID, _ := meta["span_id"].(string)
	summaryID, _ := meta["summary_message_id"].(string)
	if r["success"] != true || r["output"] != "Compacted 6 messages into span_id="+spanID+"." || r["error"] != nil {
		t.Errorf("result %v; want success, \"Compacted 6 messages into span_id=%s.\"", r, spanID)
	}
	if !strings.HasPrefix(summaryID, "msg_") || len(summaryID) != 36 {
		t.Errorf("summary_message_id %q, want msg_<32 hex>", summaryID)
	}
	var keys []string
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got := strings.Join(keys, ","); got != "compression_mode,confidence,focus,key_points,llm_run_id,preserve_recent,span_id,summary_message_id" {
		t.Errorf("meta keys %s", got)
	}
	if meta["llm_run_id"] != child.RunID || meta["compression_mode"] != "heavy" || meta["focus"] != "deploys" ||
		jsonOf(t, meta["preserve_recent"]) != "2" || jsonOf(t, meta["confidence"]) != "0.8" ||
		jsonOf(t, meta["key_points"]) != `["blue/green","3","1.5","True"]` {
		t.Errorf("meta %s", jsonOf(t, meta))
	}
	childRun, err := rt.GetState(ctx, child.RunID)
	if err != nil || childRun.Status != durable.RunCompleted {
		t.Fatalf("child run %s: %v %v, want completed", child.RunID, childRun, err)
	}

	// The archive.
	am, body, err := arts.Get(ctx, spanID)
	if err != nil {
		t.Fatalf("artifact %s: %v", spanID, err)
	}
	if am.RunID != id || jsonOf(t, am.Tags) != `{"compression_mode":"heavy","focus":"deploys","kind":"conversation_span","preserve_recent":"2"}` {
		t.Errorf("artifact run %s tags %v", am.RunID, am.Tags)
	}
	var archived map[string]any
	if err := json.Unmarshal(body, &archived); err != nil {
		t.Fatal(err)
	}
	older, _ := archived["messages"].([]any)
	if len(older) != 6 || archived["created_at"] == nil {
		t.Fatalf("archive %s; want 6 messages and created_at", body)
	}
	first := older[0].(map[string]any)
	third := older[2].(map[string]any)
	thirdID, _ := third["metadata"].(map[string]any)["message_id"].(string)
	if first["metadata"].(map[string]any)["message_id"] != "m0" || !strings.HasPrefix(thirdID, "msg_") || third["timestamp"] == nil {
		t.Errorf("archived messages not normalised as Python's (ids kept or made, timestamps set): %s", body)
	}
	span, _ := archived["span"].(map[string]any)
	if span["from_message_id"] != "m0" || span["from_timestamp"] != "2026-01-01T00:00:00+00:00" ||
		jsonOf(t, span["message_count"]) != "6" || span["to_message_id"] == nil {
		t.Errorf("archived span %v", span)
	}

	// The messages.
	msgs := messagesOf(run)
	if len(msgs) != 4 {
		t.Fatalf("context.messages %s; want system, summary and 2 recent", jsonOf(t, msgs))
	}
	sum := msgs[1].(map[string]any)
	if sum["role"] != "system" || sum["content"] != "[CONVERSATION HISTORY SUMMARY span_id="+spanID+"]: Alice chose blue/green." {
		t.Errorf("summary message %v", sum)
	}
	sm := sum["metadata"].(map[string]any)
	if sm["message_id"] != summaryID || sm["kind"] != "memory_summary" || sm["compression_mode"] != "heavy" ||
		jsonOf(t, sm["preserve_recent"]) != "2" || sm["source_artifact_id"] != spanID ||
		jsonOf(t, sm["source_message_count"]) != "6" || sm["source_from_message_id"] != "m0" ||
		sm["source_from_timestamp"] != "2026-01-01T00:00:00+00:00" || sm["source_to_message_id"] != span["to_message_id"] ||
		sm["source_to_timestamp"] != span["to_timestamp"] || sm["focus"] != "deploys" {
		t.Errorf("summary metadata %s", jsonOf(t, sm))
	}
	if msgs[0].(map[string]any)["content"] != "You are helpful." || msgs[2].(map[string]any)["content"] != "turn 6" ||
		msgs[3].(map[string]any)["content"] != "turn 7" {
		t.Errorf("context.messages %s; want the system prompt first and turns 6, 7 last", jsonOf(t, msgs))
	}

	// The span.
	spans := spansOf(run)
	if len(spans) != 1 {
		t.Fatalf("spans %v, want one", spans)
	}
	sp := spans[0].(map[string]any)
	if sp["kind"] != "conversation_span" || sp["artifact_id"] != spanID || sp["summary_message_id"] != summaryID ||
		jsonOf(t, sp["message_count"]) != "6" || sp["compression_mode"] != "heavy" || sp["focus"] != "deploys" ||
		sp["created_by"] != "alice" || sp["from_message_id"] != "m0" || sp["created_at"] == nil {
		t.Errorf("span %s", jsonOf(t, sp))
	}

	// MEMORY_REHYDRATE reads the archive back after the summary.
	id2 := startMem(t, rt, map[string]any{"context": map[string]any{"messages": msgs}, "_runtime": map[string]any{"memory_spans": spans}},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{spanID}}))
	run2 := tickDone(t, rt, id2)
	mustComplete(t, run2)
	if n := len(messagesOf(run2)); n != 10 {
		t.Errorf("rehydrated context has %d messages, want 4 + the 6 archived", n)
	}
}

// Without an LLM_CALL handler the compaction fails saying so, and
// leaves the messages as they were.
func TestMemoryCompactWithoutLLMHandlerFails(t *testing.T) {
	st := memory.New()
	rt := compactRuntime(t, st, artifact.NewMemory(), nil)
	id := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}},
		step(durable.EffectMemoryCompact, map[string]any{}))
	run := tickDone(t, rt, id)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "MEMORY_COMPACT requires an LLM_CALL handler") {
		t.Fatalf("run %s, error %q; want failed, naming the missing LLM_CALL handler", run.Status, run.Error)
	}
	if n := len(messagesOf(run)); n != 9 {
		t.Errorf("context.messages has %d messages after the failure, want the 9 it had", n)
	}
}

// The LLM's answer as Python reads it: text that is not JSON is the
// summary as it is, empty text is "(summary unavailable)", and a
// transport error's words fail the compaction.
func TestMemoryCompactReadsTheLLMAnswerAsPython(t *testing.T) {
	cases := []struct {
		content any
		summary string // "" = the run fails
		errText string
	}{
		{content: "Plain words, {not JSON}.", summary: "Plain words, {not JSON}."},
		{content: `{"summary": "", "key_points": "not a list", "confidence": "high"}`,
			summary: `{"summary": "", "key_points": "not a list", "confidence": "high"}`},
		{content: `["a", "list"]`, summary: `["a", "list"]`},
		{content: nil, summary: "(summary unavailable)"},
		{content: "   ", summary: "(summary unavailable)"},
		{content: "Error: connection refused by localhost:11434", errText: "Compaction LLM unavailable: Error: connection refused by localhost:11434"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.content), func(t *testing.T) {
			llm := &scriptedLLM{content: tc.content}
			rt := compactRuntime(t, memory.New(), artifact.NewMemory(), llm)
			id := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}},
				step(durable.EffectMemoryCompact, map[string]any{}))
			run := tickDone(t, rt, id)
			if tc.summary == "" {
				if run.Status != durable.RunFailed || !strings.Contains(run.Error, tc.errText) {
					t.Fatalf("run %s, error %q; want failed with %q", run.Status, run.Error, tc.errText)
				}
				return
			}
			mustComplete(t, run)
			meta := metaOf(t, res(t, run, 0))
			if jsonOf(t, meta["key_points"]) != "[]" || meta["confidence"] != nil {
				t.Errorf("meta %s; want no key points and confidence null", jsonOf(t, meta))
			}
			want := "[CONVERSATION HISTORY SUMMARY span_id=" + meta["span_id"].(string) + "]: " + tc.summary
			if got := messagesOf(run)[1].(map[string]any)["content"]; got != want {
				t.Errorf("summary message %q, want %q", got, want)
			}
		})
	}
}

// target_run_id compacts another run: its messages, output messages and
// span index change and are saved; the archive is that run's; the
// requesting run keeps its own messages and owns the LLM child.
func TestMemoryCompactTargetsAnotherRun(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	llm := &scriptedLLM{content: `{"summary": "earlier talk", "confidence": 1}`}
	rt := compactRuntime(t, memory.New(), arts, llm)
	a := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}})
	mustComplete(t, tickDone(t, rt, a))
	own := []any{map[string]any{"role": "user", "content": "mine"}}
	b := startMem(t, rt, map[string]any{"context": map[string]any{"messages": own}},
		step(durable.EffectMemoryCompact, map[string]any{"target_run_id": " " + a + " "}))
	run := tickDone(t, rt, b)
	mustComplete(t, run)
	meta := metaOf(t, res(t, run, 0))
	spanID := meta["span_id"].(string)

	target, err := rt.GetState(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	msgs := messagesOf(target)
	if len(msgs) != 8 || msgs[1].(map[string]any)["content"] != "[CONVERSATION HISTORY SUMMARY span_id="+spanID+"]: earlier talk" {
		t.Fatalf("target messages %s; want system, summary, 6 recent", jsonOf(t, msgs))
	}
	if out, _ := target.Output["messages"].([]any); len(out) != 8 {
		t.Errorf("target output.messages %v; want the new messages (Python sets them on a dict output)", target.Output["messages"])
	}
	if spans := spansOf(target); len(spans) != 1 || spans[0].(map[string]any)["artifact_id"] != spanID {
		t.Errorf("target spans %v; want the compaction's", spans)
	}
	if len(spansOf(run)) != 0 || jsonOf(t, messagesOf(run)) != jsonOf(t, own) {
		t.Errorf("requesting run changed: spans %v messages %v", spansOf(run), messagesOf(run))
	}
	if am, err := arts.Metadata(ctx, spanID); err != nil || am.RunID != a {
		t.Errorf("artifact %v %v; want it owned by the target run", am, err)
	}
	if llm.runs[0].ParentRunID != b || jsonOf(t, meta["confidence"]) != "1" {
		t.Errorf("child parent %s, confidence %v", llm.runs[0].ParentRunID, meta["confidence"])
	}

	// An unknown target fails as Python's.
	c := startMem(t, rt, nil, step(durable.EffectMemoryCompact, map[string]any{"target_run_id": "nope"}))
	if run := tickDone(t, rt, c); run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown target_run_id: nope") {
		t.Errorf("unknown target: run %s, error %q", run.Status, run.Error)
	}
}

// failCommitStore fails, once, the commit that records MEMORY_COMPACT's
// completion, writing nothing of it: a kill after the child run ended and
// before the requesting run's commit.
type failCommitStore struct {
	store.Store
	mu     sync.Mutex
	failed bool
}

var errCommitLost = errors.New("simulated kill before the commit")

func (s *failCommitStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	hit := false
	if !s.failed && !p.Create {
		for _, r := range p.Records {
			hit = hit || completedOf(durable.EffectMemoryCompact)(r)
		}
	}
	s.failed = s.failed || hit
	s.mu.Unlock()
	if hit {
		return errCommitLost
	}
	return s.Store.RunCommit(ctx, p)
}

// A kill after the summariser child ended and before the requesting run's
// commit: the replay finds the ended child (no second LLM call), the
// archive (one artifact, kept as stored) and compacts the messages once.
func TestMemoryCompactReplayAfterLostCommitSummarisesOnce(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	llm := &scriptedLLM{content: `{"summary": "once"}`}
	fs := &failCommitStore{Store: memory.New()}
	rt := compactRuntime(t, fs, arts, llm)
	id := startOnce(t, rt, conversation(8))
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, errCommitLost) {
		t.Fatalf("first tick: %v, want the simulated kill", err)
	}
	first, _ := arts.ListByRun(ctx, id)
	if len(first) != 1 {
		t.Fatalf("artifacts after the kill: %d, want the archive", len(first))
	}
	rt2 := compactRuntime(t, fs, arts, llm) // a new process
	run := tickDone(t, rt2, id)
	mustComplete(t, run)
	if llm.calls() != 1 {
		t.Errorf("LLM called %d times, want once (the replay reads the ended child)", llm.calls())
	}
	after, _ := arts.ListByRun(ctx, id)
	if len(after) != 1 || after[0].ArtifactID != first[0].ArtifactID || after[0].CreatedAt != first[0].CreatedAt {
		t.Errorf("artifacts after the replay %v; want the one archive as first stored", after)
	}
	meta := metaOf(t, res(t, run, 0))
	if meta["span_id"] != first[0].ArtifactID || meta["llm_run_id"] != llm.runs[0].RunID {
		t.Errorf("meta %s; want the archive and the first child", jsonOf(t, meta))
	}
	if spans := spansOf(run); len(spans) != 1 {
		t.Errorf("spans %v, want one", spans)
	}
	if msgs := messagesOf(run); len(msgs) != 8 || !strings.HasSuffix(msgs[1].(map[string]any)["content"].(string), ": once") {
		t.Errorf("messages %s", jsonOf(t, msgs))
	}
}

// A kill between the completed record and the state write (JSON-file
// store): the replay reuses the record and makes its changes to the
// requesting run again, under the recorded ids, without the LLM.
func TestMemoryCompactReplayOfRecordRedoesTheChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	llm := &scriptedLLM{content: `{"summary": "recorded"}`}
	rt := compactRuntime(t, &jsonKillStore{Store: js, at: completedOf(durable.EffectMemoryCompact)}, arts, llm)
	id := startOnce(t, rt, conversation(8))
	rt2 := compactRuntime(t, killTickAndReopen(t, rt, id, js, dir), arts, llm)
	run := tickDone(t, rt2, id)
	mustComplete(t, run)
	if llm.calls() != 1 {
		t.Errorf("LLM called %d times, want once", llm.calls())
	}
	meta := metaOf(t, res(t, run, 0))
	spanID, summaryID := meta["span_id"].(string), meta["summary_message_id"].(string)
	msgs := messagesOf(run)
	if len(msgs) != 8 {
		t.Fatalf("messages after the replay %s; want them compacted", jsonOf(t, msgs))
	}
	sum := msgs[1].(map[string]any)
	if sum["content"] != "[CONVERSATION HISTORY SUMMARY span_id="+spanID+"]: recorded" ||
		sum["metadata"].(map[string]any)["message_id"] != summaryID {
		t.Errorf("summary message %s; want the recorded span and message ids", jsonOf(t, sum))
	}
	if spans := spansOf(run); len(spans) != 1 || spans[0].(map[string]any)["artifact_id"] != spanID {
		t.Errorf("spans %v; want the recorded span once", spans)
	}
	if all, _ := arts.ListByRun(ctx, id); len(all) != 1 {
		t.Errorf("%d artifacts, want the one archive", len(all))
	}
}

// archivedOrKept is the contents of every message run holds in its
// context or in an archive its span index names.
func archivedOrKept(t *testing.T, arts artifact.Store, run *durable.RunState) map[string]bool {
	t.Helper()
	kept := map[string]bool{}
	for _, m := range messagesOf(run) {
		kept[m.(map[string]any)["content"].(string)] = true
	}
	for _, s := range spansOf(run) {
		id := s.(map[string]any)["artifact_id"].(string)
		_, body, err := arts.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("archive %s: %v", id, err)
		}
		var archived map[string]any
		if err := json.Unmarshal(body, &archived); err != nil {
			t.Fatal(err)
		}
		for _, m := range archived["messages"].([]any) {
			kept[m.(map[string]any)["content"].(string)] = true
		}
	}
	return kept
}

// appendTurn commits a user message "turn 8" to run id, as another
// writer would.
func appendTurn(t *testing.T, st store.Store, id string) {
	t.Helper()
	ctx := context.Background()
	run, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatalf("loading %s: %v", id, err)
	}
	c := run.Vars["context"].(map[string]any)
	c["messages"] = append(c["messages"].([]any), map[string]any{"role": "user", "content": "turn 8"})
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatalf("committing %s: %v", id, err)
	}
}

// A retried attempt after the first one archived the older messages and
// then failed on the target's write (another writer added a message
// meanwhile: "… changed during the compaction; retry") compacts what the
// target holds now, under a new child and a new archive holding exactly
// the messages it removes (as Python archives split.older_messages on
// every run of the handler): no message leaves the context unarchived.
func TestMemoryCompactRetryAfterTargetChangedArchivesWhatItRemoves(t *testing.T) {
	st := memory.New()
	arts := artifact.NewMemory()
	var target string
	llm := &scriptedLLM{content: `{"summary": "earlier talk"}`, onCall: func(n int) {
		if n == 1 {
			appendTurn(t, st, target) // while the first attempt's LLM call runs
		}
	}}
	rt := retryingCompactRuntime(t, st, arts, llm, 2)
	target = startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}})
	mustComplete(t, tickDone(t, rt, target))

	b := startMem(t, rt, nil, step(durable.EffectMemoryCompact, map[string]any{
		"target_run_id": target, "preserve_recent": 2,
	}))
	run := tickDone(t, rt, b)
	mustComplete(t, run)
	if llm.calls() != 2 || llm.runs[0].RunID == llm.runs[1].RunID {
		t.Fatalf("LLM called %d times; want the first attempt to fail on the changed target and a second one in a new child",
			llm.calls())
	}
	a, err := rt.GetState(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	kept := archivedOrKept(t, arts, a)
	for i := range 9 {
		if want := fmt.Sprintf("turn %d", i); !kept[want] {
			t.Errorf("%s is neither in the target's context nor in an archive (output %q, spans %s)",
				want, res(t, run, 0)["output"], jsonOf(t, spansOf(a)))
		}
	}
	meta := metaOf(t, res(t, run, 0))
	if res(t, run, 0)["output"] != "Compacted 7 messages into span_id="+meta["span_id"].(string)+"." ||
		meta["llm_run_id"] != llm.runs[1].RunID {
		t.Errorf("result %v; want the second attempt's 7 messages and child", res(t, run, 0))
	}
}

// failTargetCommit fails, once, a commit of run id that is not a create:
// a kill between MEMORY_COMPACT's archive and its write of the target.
type failTargetCommit struct {
	store.Store
	mu     sync.Mutex
	id     string
	failed bool
	cancel context.CancelFunc
}

func (s *failTargetCommit) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	hit := !s.failed && s.id != "" && !p.Create && p.Run.RunID == s.id
	s.failed = s.failed || hit
	s.mu.Unlock()
	if hit {
		s.cancel() // the process dies here
		return context.Canceled
	}
	return s.Store.RunCommit(ctx, p)
}

// startCompactOnce starts a "compact-once" run compacting with payload.
func startCompactOnce(t *testing.T, rt *runtime.Runtime, payload map[string]any) string {
	t.Helper()
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "compact-once", Vars: map[string]any{
		"payload": payload,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The replay variant: a kill after the archive and before the target's
// write; the target gets a message before the replay. The replay does
// not reuse the first child's summary and archive (turns 0..5): it
// summarises and archives what it removes now (turns 0..6).
func TestMemoryCompactReplayAfterTargetChangedArchivesWhatItRemoves(t *testing.T) {
	ctx := context.Background()
	fs := &failTargetCommit{Store: memory.New()}
	arts := artifact.NewMemory()
	llm := &scriptedLLM{content: `{"summary": "earlier talk"}`}
	rt := compactRuntime(t, fs, arts, llm)
	target := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}})
	mustComplete(t, tickDone(t, rt, target))
	b := startCompactOnce(t, rt, map[string]any{"target_run_id": target, "preserve_recent": 2})
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fs.mu.Lock()
	fs.id, fs.cancel = target, cancel
	fs.mu.Unlock()
	if r, err := rt.Tick(kctx, b, runtime.TickOptions{}); err == nil && r.Status != durable.RunRunning {
		t.Fatalf("first tick: %s %q, want the simulated kill", r.Status, r.Error)
	}
	if r, _ := fs.RunGet(ctx, b); r.Status != durable.RunRunning {
		t.Fatalf("B after the kill: %s %q, want running", r.Status, r.Error)
	}
	appendTurn(t, fs, target)

	llm2 := &scriptedLLM{content: `{"summary": "second"}`}
	rt2 := compactRuntime(t, fs, arts, llm2)
	run := tickDone(t, rt2, b)
	mustComplete(t, run)
	if llm2.calls() != 1 {
		t.Errorf("replay called the LLM %d times; want once (the first child summarised other messages)", llm2.calls())
	}
	a, err := rt2.GetState(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	kept := archivedOrKept(t, arts, a)
	for i := range 9 {
		if want := fmt.Sprintf("turn %d", i); !kept[want] {
			t.Errorf("%s is neither in the target's context nor in an archive after the replay; target messages %s spans %s",
				want, jsonOf(t, messagesOf(a)), jsonOf(t, spansOf(a)))
		}
	}
	if msgs := messagesOf(a); len(msgs) != 4 || !strings.HasSuffix(msgs[1].(map[string]any)["content"].(string), ": second") {
		t.Errorf("target messages %s; want system, the replay's summary, 2 recent", jsonOf(t, msgs))
	}
}

// A kill after the target run's write landed and before the requesting
// run's commit: the replay finds the span in the target (its older
// messages gone) and answers the first pass's result again, without a
// second LLM call, archive or compaction.
func TestMemoryCompactReplayAfterTargetWriteLandedCompactsOnce(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	llm := &scriptedLLM{content: `{"summary": "once", "key_points": ["k"], "confidence": 0.5}`}
	fs := &failCommitStore{Store: memory.New()}
	rt := compactRuntime(t, fs, arts, llm)
	target := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}})
	mustComplete(t, tickDone(t, rt, target))
	// Without the span found, the replay would answer "Nothing to compact".
	b := startCompactOnce(t, rt, map[string]any{"target_run_id": target, "preserve_recent": 1})
	if _, err := rt.Tick(ctx, b, runtime.TickOptions{}); !errors.Is(err, errCommitLost) {
		t.Fatalf("first tick: %v, want the simulated kill", err)
	}
	first, _ := rt.GetState(ctx, target)
	firstJSON := jsonOf(t, first.Vars)
	spans := spansOf(first)
	if len(spans) != 1 {
		t.Fatalf("target spans after the kill %v; want the landed one", spans)
	}
	span := spans[0].(map[string]any)

	rt2 := compactRuntime(t, fs, arts, llm)
	run := tickDone(t, rt2, b)
	mustComplete(t, run)
	if llm.calls() != 1 {
		t.Errorf("LLM called %d times, want once", llm.calls())
	}
	again, _ := rt2.GetState(ctx, target)
	if jsonOf(t, again.Vars) != firstJSON {
		t.Errorf("target changed by the replay: %s", jsonOf(t, again.Vars))
	}
	if all, _ := arts.ListByRun(ctx, target); len(all) != 1 {
		t.Errorf("%d archives, want one", len(all))
	}
	meta := metaOf(t, res(t, run, 0))
	if meta["span_id"] != span["artifact_id"] || meta["summary_message_id"] != span["summary_message_id"] ||
		meta["llm_run_id"] != llm.runs[0].RunID || jsonOf(t, meta["key_points"]) != `["k"]` ||
		res(t, run, 0)["output"] != "Compacted 7 messages into span_id="+span["artifact_id"].(string)+"." {
		t.Errorf("replayed result %s; want the first pass's", jsonOf(t, res(t, run, 0)))
	}
}

// Python's int() keeps ints past int64: preserve_recent 1e20 is 10**20,
// more than any run's messages, so nothing is compacted and the answer
// gives its digits; _limits.max_output_tokens 1e20 asks the LLM for
// max_tokens 10**20.
func TestMemoryCompactKeepsIntsPastInt64(t *testing.T) {
	llm := &scriptedLLM{content: `{"summary": "x"}`}
	rt := compactRuntime(t, memory.New(), artifact.NewMemory(), llm)
	id := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}},
		step(durable.EffectMemoryCompact, map[string]any{"preserve_recent": 1e20}))
	run := tickDone(t, rt, id)
	mustComplete(t, run)
	want := "Nothing to compact (non-system messages <= preserve_recent=100000000000000000000)."
	if r := res(t, run, 0); llm.calls() != 0 || r["output"] != want || len(messagesOf(run)) != 9 {
		t.Errorf("preserve_recent 1e20: LLM calls %d, output %q, %d messages left; want no call, %q, the 9 messages",
			llm.calls(), r["output"], len(messagesOf(run)), want)
	}

	id = startMem(t, rt, map[string]any{
		"context": map[string]any{"messages": conversation(8)},
		"_limits": map[string]any{"max_output_tokens": 1e20},
	}, step(durable.EffectMemoryCompact, map[string]any{"preserve_recent": "2"}))
	mustComplete(t, tickDone(t, rt, id))
	if llm.calls() != 1 || jsonOf(t, llm.payloads[0]["params"]) != `{"max_tokens":100000000000000000000}` {
		t.Errorf("LLM payloads %s; want params max_tokens 100000000000000000000", jsonOf(t, llm.payloads))
	}
}
