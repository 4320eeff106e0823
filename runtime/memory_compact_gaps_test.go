package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// compactWith compacts conversation(8) (preserve_recent 6) with the LLM
// answering content and returns the ended run.
func compactWith(t *testing.T, content any) *durable.RunState {
	t.Helper()
	rt := compactRuntime(t, memory.New(), artifact.NewMemory(), &scriptedLLM{content: content})
	id := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}},
		step(durable.EffectMemoryCompact, map[string]any{}))
	run := tickDone(t, rt, id)
	mustComplete(t, run)
	return run
}

// TestMemoryCompactCutsAFencedAnswerOpeningWithItsObject: a JSON object that opens the
// answer but is followed by other words is still cut from its first "{"
// to its last "}" when the answer holds a fence (0 <= start, not 0 <
// start), where the whole answer is no JSON and would be the summary.
func TestMemoryCompactCutsAFencedAnswerOpeningWithItsObject(t *testing.T) {
	run := compactWith(t, "{\"summary\": \"cut ```\"} see above")
	meta := metaOf(t, res(t, run, 0))
	want := "[CONVERSATION HISTORY SUMMARY span_id=" + meta["span_id"].(string) + "]: cut ```"
	if got := messagesOf(run)[1].(map[string]any)["content"]; got != want {
		t.Errorf("summary message %q, want %q", got, want)
	}
}

// TestMemoryCompactArchivesARolelessMessageAsUserWithATimestamp: Python's
// normalize_messages gives a message without a role the role "user" and a
// message whose timestamp is blank (whitespace) a fresh one; the archive
// must hold both so, rehydrated, the message reads as the user's and has
// a time (an "assistant" default, or a kept "  " timestamp, would not).
func TestMemoryCompactArchivesARolelessMessageAsUserWithATimestamp(t *testing.T) {
	msgs := conversation(8)
	msgs[1] = map[string]any{"content": "no role", "timestamp": "  "}
	arts := artifact.NewMemory()
	rt := compactRuntime(t, memory.New(), arts, &scriptedLLM{content: "sum"})
	id := startMem(t, rt, map[string]any{"context": map[string]any{"messages": msgs}},
		step(durable.EffectMemoryCompact, map[string]any{}))
	run := tickDone(t, rt, id)
	mustComplete(t, run)
	v, err := artifact.LoadJSON(t.Context(), arts, metaOf(t, res(t, run, 0))["span_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	first := v.(map[string]any)["messages"].([]any)[0].(map[string]any)
	if first["role"] != "user" {
		t.Errorf("archived role %v, want user", first["role"])
	}
	if ts, _ := first["timestamp"].(string); ts == "" || ts == "  " {
		t.Errorf("archived timestamp %q, want a generated one", ts)
	}
}

// TestMemoryCompactSpanRunsFromFirstToLastOlderMessage: the archived span
// runs from the first older message's timestamp to the last one's (spec
// §3.8 source_from/to_timestamp), in the summary message and the span
// index; taking the first message's time for both ends would lose the
// span's extent, which MEMORY_QUERY's time filters read.
func TestMemoryCompactSpanRunsFromFirstToLastOlderMessage(t *testing.T) {
	run := compactWith(t, "sum")
	const from, to = "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00" // turns 0 and 1
	md := messagesOf(run)[1].(map[string]any)["metadata"].(map[string]any)
	if md["source_from_timestamp"] != from || md["source_to_timestamp"] != to {
		t.Errorf("summary metadata %v, want %s .. %s", md, from, to)
	}
	span := spansOf(run)[0].(map[string]any)
	if span["from_timestamp"] != from || span["to_timestamp"] != to {
		t.Errorf("span %v, want %s .. %s", span, from, to)
	}
}
