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
// payloads it was sent.
type scriptedLLM struct {
	mu       sync.Mutex
	content  any
	payloads []map[string]any
	runs     []*durable.RunState
}

func (l *scriptedLLM) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.payloads = append(l.payloads, req.Effect.Payload)
		l.runs = append(l.runs, req.Run)
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
