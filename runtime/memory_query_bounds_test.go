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

// timedSpan is a conversation span of the index covering [from, to]
// (either "" to leave it out), created at created.
func timedSpan(id, created, from, to string) map[string]any {
	s := map[string]any{"kind": "conversation_span", "artifact_id": id, "created_at": created}
	if from != "" {
		s["from_timestamp"] = from
	}
	if to != "" {
		s["to_timestamp"] = to
	}
	return s
}

func spanIndexVars(spans ...any) map[string]any {
	return map[string]any{"_runtime": map[string]any{"memory_spans": spans}}
}

// since/until select spans whose [from, to] meets the range as closed
// intervals (Python's TimeRange.contains: span_end < since and
// span_start > until exclude): a span ending exactly at since, or starting
// exactly at until, is recalled. Reading either bound as open (<= / >=)
// drops it.
func TestMemoryQueryTimeRangeBoundsAreInclusive(t *testing.T) {
	f := memSetup(t, true)
	vars := spanIndexVars(timedSpan("span_a", "2026-01-01T12:00:00+00:00", "2026-01-01T10:00:00+00:00", "2026-01-01T11:00:00+00:00"))
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"since": "2026-01-01T11:00:00+00:00", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"until": "2026-01-01T10:00:00+00:00", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"since": "2026-01-01T11:00:01+00:00", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"until": "2026-01-01T09:59:59+00:00", "return": "meta"}),
	)
	mustComplete(t, run)
	for i, want := range []int{1, 1, 0, 0} {
		if got := spanIDs(t, res(t, run, i)); len(got) != want {
			t.Errorf("query %d: span ids %v, want %d", i, got, want)
		}
	}
}

// With a time range, a span lacking either timestamp is never recalled
// (Python: "cannot prove they belong to the requested interval"); only a
// span with both is. Accepting a span with one of them would recall it.
func TestMemoryQueryTimeRangeSkipsSpansMissingATimestamp(t *testing.T) {
	f := memSetup(t, true)
	vars := spanIndexVars(
		timedSpan("span_from_only", "2026-01-01T12:00:03+00:00", "2026-01-01T10:00:00+00:00", ""),
		timedSpan("span_to_only", "2026-01-01T12:00:02+00:00", "", "2026-01-01T11:00:00+00:00"),
		timedSpan("span_both", "2026-01-01T12:00:01+00:00", "2026-01-01T10:00:00+00:00", "2026-01-01T11:00:00+00:00"),
	)
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"since": "2000-01-01T00:00:00+00:00", "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_both" {
		t.Errorf("span ids %v, want only span_both", got)
	}
}

// A negative limit_spans is raised to 1 (Python: if limit_spans < 1:
// limit_spans = 1), so the newest span is still recalled; a floor of 0
// would recall nothing.
func TestMemoryQueryNegativeLimitSpansRecallsOneSpan(t *testing.T) {
	f := memSetup(t, true)
	vars := spanIndexVars(
		timedSpan("span_old", "2026-01-01T12:00:01+00:00", "", ""),
		timedSpan("span_new", "2026-01-01T12:00:02+00:00", "", ""),
	)
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"limit_spans": int64(-2), "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_new" {
		t.Errorf("span ids %v, want [span_new]", got)
	}
}

// max_messages below -1 means unlimited (Python: if max_messages < -1:
// max_messages = -1), and one that int() reads as 0 or a fraction below 1
// ("0", 0.5: truthy, so not the -1 default) renders one message (Python:
// max_messages != -1 and < 1 → 1). Clamping -5 to anything else would
// omit messages; flooring at 0 would render none.
func TestMemoryQueryMaxMessagesBelowRangeIsUnlimitedOrOne(t *testing.T) {
	f := memSetup(t, true)
	id := archiveSpan(t, f, []any{
		map[string]any{"role": "user", "content": "first"},
		map[string]any{"role": "assistant", "content": "second"},
		map[string]any{"role": "user", "content": "third"},
	})
	vars := spanIndexVars(timedSpan(id, "2026-01-01T12:00:00+00:00", "", ""))
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"span_id": id, "max_messages": int64(-5)}),
		step(durable.EffectMemoryQuery, map[string]any{"span_id": id, "max_messages": "0"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_id": id, "max_messages": 0.5}),
	)
	mustComplete(t, run)
	out := res(t, run, 0)["output"].(string)
	if !strings.Contains(out, "    - user: third") || strings.Contains(out, "omitted") {
		t.Errorf("max_messages -5 must render every message:\n%s", out)
	}
	for i := 1; i <= 2; i++ {
		out := res(t, run, i)["output"].(string)
		if !strings.Contains(out, "    - user: first") || strings.Contains(out, "second") ||
			!strings.Contains(out, "(remaining 2 messages omitted by max_messages=1)") {
			t.Errorf("query %d must render exactly one message:\n%s", i, out)
		}
	}
}

// With a recall_level and deep on, a deep budget the caller did not give
// is lowered to the level's cap silently (Python applies min() to the
// defaults it chose); only an explicit value over the cap is reported.
// Letting the generic clamp handle the default would add "clamped
// deep_limit_spans from 50 to 25" warnings the caller never caused.
func TestMemoryQueryRecallLevelLowersDeepDefaultsWithoutWarning(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars()},
		step(durable.EffectMemoryQuery, map[string]any{"query": "x", "recall_level": "standard", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "x", "recall_level": "standard", "return": "meta",
			"deep_limit_spans": int64(50), "deep_limit_messages_per_span": int64(400)}),
	)
	mustComplete(t, run)
	m := metaOf(t, res(t, run, 0))
	applied := m["effort"].(map[string]any)["applied"].(map[string]any)
	if applied["deep"] != true || applied["deep_limit_spans"] != int64(25) || applied["deep_limit_messages_per_span"] != int64(200) {
		t.Errorf("applied %v, want deep with 25 spans and 200 messages per span", applied)
	}
	if w, ok := m["warnings"]; ok {
		t.Errorf("warnings %v, want none for defaults", w)
	}
	w, _ := metaOf(t, res(t, run, 1))["warnings"].([]any)
	if len(w) != 2 || w[0] != "recall_level=standard: clamped deep_limit_spans from 50 to 25" ||
		w[1] != "recall_level=standard: clamped deep_limit_messages_per_span from 400 to 200" {
		t.Errorf("explicit deep budgets: warnings %v", w)
	}
}

// tags_mode "any" recalls a span matching at least one required tag and
// no span matching none (Python: any(_key_matches(k) ...)); treating "any"
// as always satisfied would recall every span.
func TestMemoryQueryTagsModeAnySkipsSpansMatchingNoTag(t *testing.T) {
	f := memSetup(t, true)
	hit := timedSpan("span_hit", "2026-01-01T12:00:02+00:00", "", "")
	hit["tags"] = map[string]any{"person": "ada"}
	miss := timedSpan("span_miss", "2026-01-01T12:00:01+00:00", "", "")
	miss["tags"] = map[string]any{"topic": "tax", "person": "bob"}
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(hit, miss)},
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"topic": "launch", "person": "ada"},
			"tags_mode": "any", "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_hit" {
		t.Errorf("span ids %v, want [span_hit]", got)
	}
}

// A span's compression_mode and focus fields count as tags for the tags
// filter (Python's derived tags "kind", "compression_mode", "focus"), so
// a compacted span is found by its focus without any tags of its own.
func TestMemoryQueryTagsMatchSpanFocusAndCompressionMode(t *testing.T) {
	f := memSetup(t, true)
	s := timedSpan("span_focus", "2026-01-01T12:00:00+00:00", "", "")
	s["focus"] = "Budget"
	s["compression_mode"] = "light"
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(s)},
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"focus": "budget"}, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"compression_mode": "LIGHT"}, "return": "meta"}),
	)
	mustComplete(t, run)
	for i := 0; i < 2; i++ {
		if got := spanIDs(t, res(t, run, i)); len(got) != 1 || got[0] != "span_focus" {
			t.Errorf("query %d: span ids %v, want [span_focus]", i, got)
		}
	}
}

// The authors filter compares created_by case-insensitively (Python
// lower-cases both sides): "Ada" is found by authors ["ada"].
func TestMemoryQueryAuthorsMatchCreatedByCaseInsensitively(t *testing.T) {
	f := memSetup(t, true)
	s := timedSpan("span_ada", "2026-01-01T12:00:00+00:00", "", "")
	s["created_by"] = " Ada "
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(s)},
		step(durable.EffectMemoryQuery, map[string]any{"authors": []any{"ADA"}, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_ada" {
		t.Errorf("span ids %v, want [span_ada]", got)
	}
}

// A keyword query searches the span's summary message (a system message
// of context.messages with metadata kind memory_summary naming the span's
// artifact), as Python's _span_haystack does: a span known only by its
// summary is found by a word of it, without a deep scan.
func TestMemoryQueryKeywordMatchesSpanSummary(t *testing.T) {
	f := memSetup(t, true)
	vars := spanIndexVars(timedSpan("span_sum", "2026-01-01T12:00:00+00:00", "", ""))
	vars["context"] = map[string]any{"messages": []any{map[string]any{
		"role": "system", "content": "Summary: the launch codename is PELICAN.",
		"metadata": map[string]any{"kind": "memory_summary", "source_artifact_id": "span_sum"},
	}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"query": "pelican", "deep": false, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_sum" {
		t.Errorf("span ids %v, want [span_sum]", got)
	}
}

// A since/until that is no timestamp fails the query with a message
// naming the bound and the value; a message without the bound's name
// leaves the caller guessing which one was wrong.
func TestMemoryQueryBadTimestampNamesTheBound(t *testing.T) {
	f := memSetup(t, true)
	for k, want := range map[string]string{
		"since": "memory_query invalid since timestamp: yesterday",
		"until": "memory_query invalid until timestamp: yesterday",
	} {
		run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryQuery, map[string]any{k: "yesterday"}))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, want) {
			t.Errorf("%s: status %s error %q, want %q", k, run.Status, run.Error, want)
		}
	}
}

// A recalled note renders at most its first 12 source span ids and
// message ids (Python's sources[:12]); the 13th is left out.
func TestMemoryQueryNoteRendersFirstTwelveSourceIDs(t *testing.T) {
	f := memSetup(t, true)
	var spanIDsIn, msgIDsIn, wantSpans, wantMsgs []any
	for i := 1; i <= 13; i++ {
		spanIDsIn = append(spanIDsIn, fmt.Sprintf("s%d", i))
		msgIDsIn = append(msgIDsIn, fmt.Sprintf("m%d", i))
		if i <= 12 {
			wantSpans = append(wantSpans, fmt.Sprintf("s%d", i))
			wantMsgs = append(wantMsgs, fmt.Sprintf("m%d", i))
		}
	}
	meta, err := artifact.PutJSON(context.Background(), f.arts, map[string]any{"note": "remember this",
		"sources": map[string]any{"run_id": "r0", "span_ids": spanIDsIn, "message_ids": msgIDsIn}},
		artifact.PutParams{Tags: map[string]string{"kind": "memory_note"}})
	if err != nil {
		t.Fatal(err)
	}
	span := timedSpan(meta.ArtifactID, "2026-01-01T12:00:00+00:00", "", "")
	span["kind"] = "memory_note"
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(span)},
		step(durable.EffectMemoryQuery, map[string]any{"span_id": meta.ArtifactID}))
	mustComplete(t, run)
	out := res(t, run, 0)["output"].(string)
	join := func(l []any) string { return strings.Trim(strings.ReplaceAll(fmt.Sprint(l), " ", ", "), "[]") }
	for _, want := range []string{"    sources.span_ids: " + join(wantSpans) + "\n", "    sources.message_ids: " + join(wantMsgs)} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s13") || strings.Contains(out, "m13") {
		t.Errorf("output names the 13th source id:\n%s", out)
	}
}

// putMessages archives a conversation span's messages as MEMORY_COMPACT
// does and returns the artifact id.
func putMessages(t *testing.T, f *memFixture, contents ...string) string {
	t.Helper()
	var msgs []any
	for _, c := range contents {
		msgs = append(msgs, map[string]any{"role": "user", "content": c})
	}
	return archiveSpan(t, f, msgs)
}

// The connected expansion keeps every seed even when the keyword match
// plus the deep scan found more than limit_spans (Python: limit =
// max(limit_spans, len(selected))); capping it at limit_spans would drop
// the span the deep scan found.
func TestMemoryQueryConnectedKeepsSeedsBeyondLimitSpans(t *testing.T) {
	f := memSetup(t, true)
	tagged := timedSpan("span_tagged", "2026-01-01T12:00:02+00:00", "", "")
	tagged["tags"] = map[string]any{"topic": "pelican"}
	deep := timedSpan(putMessages(t, f, "the codename is PELICAN"), "2026-01-01T12:00:01+00:00", "", "")
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(tagged, deep)},
		step(durable.EffectMemoryQuery, map[string]any{"query": "pelican", "limit_spans": int64(1), "connected": true,
			"neighbor_hops": int64(0), "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 2 || got[0] != "span_tagged" || got[1] != deep["artifact_id"] {
		t.Errorf("span ids %v, want [span_tagged %s]", got, deep["artifact_id"])
	}
}

// A required tag "kind" is ignored by the tags filter (Python skips the
// reserved key), so tags {"kind": "memory_note"} recalls a conversation
// span too: filtering on it would drop that span.
func TestMemoryQueryTagsFilterIgnoresKindKey(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(timedSpan("span_conv", "2026-01-01T12:00:00+00:00", "", ""))},
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"kind": "memory_note"}, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_conv" {
		t.Errorf("span ids %v, want [span_conv]", got)
	}
}

// deep: true without a query scans nothing (Python: if deep_enabled and
// query_text); scanning with an empty query would match every span with a
// message and recall past limit_spans.
func TestMemoryQueryDeepWithoutQueryKeepsLimitSpans(t *testing.T) {
	f := memSetup(t, true)
	newer := timedSpan(putMessages(t, f, "alpha"), "2026-01-01T12:00:02+00:00", "", "")
	older := timedSpan(putMessages(t, f, "beta"), "2026-01-01T12:00:01+00:00", "", "")
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(newer, older)},
		step(durable.EffectMemoryQuery, map[string]any{"deep": true, "limit_spans": int64(1), "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != newer["artifact_id"] {
		t.Errorf("span ids %v, want only the newest span", got)
	}
}

// A keyword query searches the span's created_by and location fields (in
// Python's _span_haystack): a span is found by the place it was written.
func TestMemoryQueryKeywordMatchesSpanLocation(t *testing.T) {
	f := memSetup(t, true)
	s := timedSpan("span_lisbon", "2026-01-01T12:00:00+00:00", "", "")
	s["location"] = "Lisbon office"
	run := f.runSteps(t, runtime.StartParams{Vars: spanIndexVars(s)},
		step(durable.EffectMemoryQuery, map[string]any{"query": "LISBON", "deep": false, "return": "meta"}))
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 || got[0] != "span_lisbon" {
		t.Errorf("span ids %v, want [span_lisbon]", got)
	}
}
