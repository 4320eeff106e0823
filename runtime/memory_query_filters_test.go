package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestMemoryQueryLimitSpansTrueIsOne: limit_spans is read as Python's
// int(v or 5), and int(True) is 1; reading a bool as "not a number" would
// fall back to the default of 5.
func TestMemoryQueryLimitSpansTrueIsOne(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "a"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "b"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "c"}),
		step(durable.EffectMemoryQuery, map[string]any{"limit_spans": true, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 3)); len(got) != 1 {
		t.Errorf("limit_spans true: %d spans %v, want 1", len(got), got)
	}
}

// TestMemoryQueryDefaultLimitIsFiveSpans: without limit_spans (or a
// recall level) a query returns at most 5 spans, newest first (spec
// §3.8 limit_spans default 5).
func TestMemoryQueryDefaultLimitIsFiveSpans(t *testing.T) {
	f := memSetup(t, true)
	var steps []map[string]any
	for i := 0; i < 7; i++ {
		steps = append(steps, step(durable.EffectMemoryNote, map[string]any{"note": "n"}))
	}
	steps = append(steps, step(durable.EffectMemoryQuery, map[string]any{"return": "meta"}))
	run := f.runSteps(t, runtime.StartParams{}, steps...)
	mustComplete(t, run)
	got := spanIDs(t, res(t, run, 7))
	if len(got) != 5 || got[0] != spansOf(run)[6].(map[string]any)["artifact_id"] {
		t.Errorf("default query: %v, want the 5 newest", got)
	}
}

// indexSpans is a span index of conversation spans c1..cN an hour apart
// (2026-01-01T0<i>:00), each spanning 30 minutes, with the given tags.
func indexSpans(tags ...map[string]any) map[string]any {
	spans := make([]any, len(tags))
	for i, tg := range tags {
		from := fmt.Sprintf("2026-01-01T0%d:00:00+00:00", i+1)
		s := map[string]any{"kind": "conversation_span", "artifact_id": fmt.Sprintf("c%d", i+1), "created_at": from,
			"from_timestamp": from, "to_timestamp": fmt.Sprintf("2026-01-01T0%d:30:00+00:00", i+1)}
		if tg != nil {
			s["tags"] = tg
		}
		spans[i] = s
	}
	return map[string]any{"_runtime": map[string]any{"memory_spans": spans}}
}

// TestMemoryQueryTimeRangeKeepsPartlyOverlappingSpans: since/until select
// the spans whose [from_timestamp, to_timestamp] intersects the range
// (spec §3.8, closed-interval intersection), so a span that starts before
// since but ends after it, or starts before until but ends after it, is
// kept; testing only one end of the span would drop it.
func TestMemoryQueryTimeRangeKeepsPartlyOverlappingSpans(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{Vars: indexSpans(nil, nil, nil)}, // c1 01:00-01:30, c2 02:00-02:30, c3 03:00-03:30
		step(durable.EffectMemoryQuery, map[string]any{"since": "2026-01-01T02:15:00+00:00", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"until": "2026-01-01T02:15:00+00:00", "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); strings.Join(got, ",") != "c3,c2" {
		t.Errorf("since 02:15: %v, want [c3 c2]", got)
	}
	if got := spanIDs(t, res(t, run, 1)); strings.Join(got, ",") != "c2,c1" {
		t.Errorf("until 02:15: %v, want [c2 c1]", got)
	}
}

// TestMemoryQueryConnectedDefaultKeysIncludePerson: connected expansion
// widens the selection to spans sharing a value of the connect_by tags,
// ["topic", "person"] by default (spec §3.8), so a span far off in time
// that names the same person is added.
func TestMemoryQueryConnectedDefaultKeysIncludePerson(t *testing.T) {
	f := memSetup(t, true)
	vars := indexSpans(map[string]any{"person": "bob", "project": "seed"}, nil, nil, map[string]any{"person": "bob"})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"query": "seed", "connected": true, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); strings.Join(got, ",") != "c1,c2,c4" {
		t.Errorf("connected: %v, want [c1 c2 c4] (the seed, its time neighbour, the span sharing person=bob)", got)
	}
}

// TestMemoryQueryTagsFallBackToArtifactTags: a required tag the span
// record lacks is looked up in the span artifact's tags (spec §3.8 tags
// filter), so a span whose tags live only on its artifact still matches.
// The span's own tags, which MEMORY_TAG edits, come first; Python reads
// the artifact's first (docs/compatibility.md).
func TestMemoryQueryTagsFallBackToArtifactTags(t *testing.T) {
	f := memSetup(t, true)
	meta, err := artifact.PutJSON(context.Background(), f.arts, map[string]any{"messages": []any{}},
		artifact.PutParams{Tags: map[string]string{"kind": "conversation_span", "topic": "Launch"}})
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{map[string]any{
		"kind": "conversation_span", "artifact_id": meta.ArtifactID, "created_at": "2026-01-01T00:00:00+00:00",
	}}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"topic": "launch"}, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != meta.ArtifactID {
		t.Errorf("tag on the artifact only: %v, want [%s]", got, meta.ArtifactID)
	}
}

// TestMemoryQueryLocationFallsBackToLocationTag: the locations filter
// reads a span's location, else its tag "location" (spec §3.8
// locations), case-insensitively; a span whose location is only a tag
// must match, one with its own location is judged by it.
func TestMemoryQueryLocationFallsBackToLocationTag(t *testing.T) {
	f := memSetup(t, true)
	vars := indexSpans(map[string]any{"location": "Paris"}, map[string]any{"location": "Paris"}, nil)
	spans := vars["_runtime"].(map[string]any)["memory_spans"].([]any)
	spans[1].(map[string]any)["location"] = "Rome"
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"locations": []any{"PARIS"}, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); strings.Join(got, ",") != "c1" {
		t.Errorf("locations [PARIS]: %v, want [c1]", got)
	}
}

// TestMemoryQueryDeepScanReadsOnlyTheFirstMessagesPerSpan: the deep scan
// reads the first deep_limit_messages_per_span messages of a span (spec
// §3.8; Python's messages[:limit]), so a match in the message after them
// is not found.
func TestMemoryQueryDeepScanReadsOnlyTheFirstMessagesPerSpan(t *testing.T) {
	f := memSetup(t, true)
	id := archiveSpan(t, f, []any{
		map[string]any{"role": "user", "content": "What is the codename?"},
		map[string]any{"role": "assistant", "content": "It is PELICAN."},
	})
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{map[string]any{
		"kind": "conversation_span", "artifact_id": id, "created_at": "2026-01-01T00:00:00+00:00",
	}}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"query": "pelican", "deep_limit_messages_per_span": 1, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "pelican", "deep_limit_messages_per_span": 2, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 0 {
		t.Errorf("match in message 2 with a limit of 1: %v, want none", got)
	}
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 {
		t.Errorf("match in message 2 with a limit of 2: %v, want the span", got)
	}
}

// TestMemoryQueryAuthorsWinOverUsernames: authors, usernames and users
// are aliases (spec §3.8) read in that order of precedence: usernames
// alone filters, and with both authors and usernames given, authors
// filters and usernames is ignored.
func TestMemoryQueryAuthorsWinOverUsernames(t *testing.T) {
	f := memSetup(t, true)
	vars := indexSpans(nil, nil)
	spans := vars["_runtime"].(map[string]any)["memory_spans"].([]any)
	spans[0].(map[string]any)["created_by"] = "alice"
	spans[1].(map[string]any)["created_by"] = "bob"
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"authors": []any{"Alice"}, "usernames": []any{"bob"}, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"usernames": []any{"BOB"}, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); strings.Join(got, ",") != "c1" {
		t.Errorf("authors [Alice] with usernames [bob]: %v, want [c1]", got)
	}
	if got := spanIDs(t, res(t, run, 1)); strings.Join(got, ",") != "c2" {
		t.Errorf("usernames [BOB] alone: %v, want [c2]", got)
	}
}

// TestMemoryQueryScopeAllFirstOwnerRecordWins: with scope "all" an
// artifact id indexed by several owners is described in meta.matches by
// the first owner's record (run, then session, then global), as the
// Python reference's by_artifact index does ("first match wins").
func TestMemoryQueryScopeAllFirstOwnerRecordWins(t *testing.T) {
	f := memSetup(t, true)
	first := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "shared", "scope": "global"}))
	mustComplete(t, first)
	id := metaOf(t, res(t, first, 0))["span_id"].(string)
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{map[string]any{
		"kind": "memory_note", "artifact_id": id, "created_at": "2026-01-01T00:00:00+00:00", "tags": map[string]any{"where": "run"},
	}}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{id}, "scope": "all", "return": "meta"}))
	mustComplete(t, run)
	matches, _ := metaOf(t, res(t, run, 0))["matches"].([]any)
	if len(matches) != 1 || matches[0].(map[string]any)["tags"].(map[string]any)["where"] != "run" {
		t.Errorf("matches %v, want the run's record (tags where=run)", matches)
	}
}
