package runtime

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// MEMORY_QUERY: provenance-first recall over the span index of the scope's
// owner run(s) (scope "all" = the run, its session owner and the global
// owner, deduplicated). Metadata filtering only — no embeddings.
//
// Selection:
//   - span_id / span_ids: explicit artifact ids or 1-based indices into the
//     owner's non-evidence spans newest first, as Python counts them
//     (indices refused for scope "all"); no other filter applies.
//   - otherwise, per owner, spans newest first (created_at descending)
//     filtered by since/until (closed-interval intersection with
//     [from_timestamp, to_timestamp]; spans without both are excluded),
//     tags (all/any over keys, values a string or a list), authors
//     (created_by) and locations (location, else tag "location"),
//     case-insensitively, and by query: a case-insensitive substring of
//     the span's metadata, tags, summary message and, for notes, the note
//     text (plus the summaries of its source spans); at most limit_spans.
//     With deep (default when query is set) the archived messages of up to
//     deep_limit_spans spans (first deep_limit_messages_per_span messages
//     each) are scanned for the query too; with connected the selection is
//     widened to time neighbours (neighbor_hops) and spans sharing a
//     connect_by tag value.
//
// Evidence spans are never returned. recall_level (urgent|standard|deep)
// sets defaults and caps budgets (spec §3.8 table); the applied budgets
// are reported in meta.effort, explicit values that were capped in
// meta.warnings.
//
// Result: tool envelope (tool name recall_memory, call id memory) whose
// output is the rendered text (return "rendered" or "both"; "" for
// "meta") and whose meta is {matches, span_ids} for "meta"/"both" (plus
// effort / warnings), null for "rendered" (as in Python: its warnings
// lead the text instead).
//
// Rendered text (as the Python runtime writes it):
//
//	Recalled memory spans (provenance-preserving):
//
//	[1] span_id=<id> kind=<kind> msgs=<message_count or ""> created_at=<ts>
//	    time_range: <from> .. <to>
//	    created_by: <actor>
//	    location: <location>
//	    tags: k=v, k2=v2
//	    summary: <summary message text>
//	    note: <note text>                    (memory_note)
//	    sources.run_id: <run>                (memory_note)
//	    sources.span_ids: a, b               (memory_note, first 12)
//	    sources.message_ids: m1, m2          (memory_note, first 12)
//	    - <timestamp> <role>: <content>      (conversation_span, per message)
//	    (remaining N messages omitted by max_messages=M)
//
// or "No matching memory spans." when nothing matched. max_messages (-1 =
// unlimited) caps the messages rendered over all spans.
func handleMemoryQuery(ctx context.Context, req *EffectRequest) (Outcome, error) {
	out, err := memoryQuery(ctx, req)
	if err != nil {
		return memOutcome(err)
	}
	return out, nil
}

// queryParams are the normalised options of one MEMORY_QUERY.
type queryParams struct {
	query          string // lower-cased
	limitSpans     int64
	deep           bool
	deepLimitSpans int64
	deepLimitMsgs  int64
	connected      bool
	neighborHops   int64
	connectBy      []string
	maxMessages    int64 // -1 = unlimited
	filter         spanFilter
	returnMode     string
	scope          string
	explicit       []spanRef
	explicitGiven  bool
	explicitErr    error // a digit string int() refuses, or an index with scope "all"
	effort         *effort
}

// spanFilter is the metadata filter of a query.
type spanFilter struct {
	since, until durable.Time
	hasRange     bool
	tags         map[string][]string // lower-cased key → lower-cased values
	tagsAny      bool
	authors      map[string]bool
	locations    map[string]bool
}

// queryOwner is one owner's span index as a query sees it.
type queryOwner struct {
	run       *durable.RunState
	stored    []any            // memory_spans as stored (index resolution)
	newest    []map[string]any // non-evidence spans, newest first
	summaries map[string]string
}

// memQuery holds one query's artifact reads (cached: a span may be read by
// the filter, the deep scan and the renderer).
type memQuery struct {
	ctx   context.Context
	arts  artifact.Store
	json  map[string]any
	metas map[string]*artifact.Metadata
}

func memoryQuery(ctx context.Context, req *EffectRequest) (Outcome, error) {
	arts, err := requireArtifacts(req)
	if err != nil {
		return Outcome{}, err
	}
	EnsureNamespaces(req.Run.Vars)
	p := req.Effect.Payload
	name := pyStrOr(p["tool_name"], "recall_memory")
	callID := pyStrOr(p["call_id"], "memory")

	qp, err := parseQueryParams(p)
	if err != nil {
		return Outcome{}, err
	}
	// The requesting run (Python reads no target_run_id here, unlike the
	// other memory effects).
	base := req.Run
	owners, err := req.Runtime.memoryOwners(ctx, base, qp.scope)
	if err != nil {
		return Outcome{}, err
	}
	q := &memQuery{ctx: ctx, arts: arts, json: map[string]any{}, metas: map[string]*artifact.Metadata{}}
	var qos []*queryOwner
	for _, o := range owners {
		run := base
		if o.id != base.RunID {
			if run, err = readOwner(ctx, req, o); err != nil {
				return Outcome{}, err
			}
		}
		if err := loadSpanIndex(ctx, req.Runtime.Artifacts(), run); err != nil {
			return Outcome{}, err
		}
		qos = append(qos, newQueryOwner(run))
	}

	// All candidate spans, first owner wins for a shared artifact id.
	byID := map[string]map[string]any{}
	summaries := map[string]string{}
	for _, qo := range qos {
		for _, s := range qo.newest {
			if id := spanArtifactID(s); id != "" && byID[id] == nil {
				byID[id] = s
			}
		}
		for k, v := range qo.summaries {
			summaries[k] = v
		}
	}

	var selected []string
	if qp.explicitErr != nil {
		return Outcome{}, qp.explicitErr
	}
	if qp.explicitGiven {
		// As Python resolves them: indices count the first owner's
		// non-evidence spans newest first (out of range: dropped); ids
		// are taken as given, rendered "(artifact payload unavailable)"
		// when nothing has them.
		newest := make([]any, len(qos[0].newest))
		for i, s := range qos[0].newest {
			newest[i] = s
		}
		for _, ref := range qp.explicit {
			if id := ref.resolve(newest); id != "" {
				selected = append(selected, id)
			}
		}
		selected = dedupStrings(selected)
	} else {
		if err := qp.filter.readRange(p); err != nil {
			return Outcome{}, err
		}
		for _, qo := range qos {
			selected = dedupStrings(append(selected, q.selectFrom(qo, qp)...))
		}
	}

	text := ""
	if qp.returnMode != "meta" {
		text = q.render(byID, summaries, selected, qp.maxMessages)
		if w := qp.effort.warningList(); w != nil {
			lines := make([]string, 0, len(w))
			for _, x := range w {
				lines = append(lines, "- "+x.(string))
			}
			text = pyval.Strip("[recall warnings]\n" + strings.Join(lines, "\n") + "\n\n" + text)
		}
	}
	var meta map[string]any // null for "rendered", as in Python
	if qp.returnMode != "rendered" {
		matches := []any{}
		for _, id := range selected {
			if s := byID[id]; s != nil {
				matches = append(matches, matchMeta(id, s))
			}
		}
		meta = map[string]any{"matches": matches, "span_ids": toAny(selected)}
		if r := qp.effort.report(); r != nil {
			meta["effort"] = r
		}
		if w := qp.effort.warningList(); w != nil {
			meta["warnings"] = w
		}
	}
	return Completed(memoryEnvelope(callID, name, true, text, "", meta)), nil
}

// parseQueryParams validates and normalises the payload of MEMORY_QUERY.
// It fails in Python's order: recall_level, then scope, then the return
// mode. What Python checks only once the owners are loaded (indices with
// scope "all", a digit string int() refuses) is kept in explicitErr; the
// time range, which only filters, is read by readRange on that path.
func parseQueryParams(p map[string]any) (*queryParams, error) {
	// First, as Python's handler reads it: an unknown level is reported
	// before an unknown scope or return mode.
	policy, err := parseRecallLevel(firstPresent(p, "recall_level", "recallLevel"))
	if err != nil {
		return nil, err
	}
	qp := &queryParams{scope: normScope(p["scope"])}
	switch qp.scope {
	case "run", "session", "global", "all":
	default:
		return nil, failf("Unknown memory_query scope: %s", qp.scope)
	}
	mode := p["return"] // Python: return or return_mode or "rendered"
	if !truthy(mode) {
		mode = p["return_mode"]
	}
	if !truthy(mode) { // a falsy return_mode (false, 0, []) is not a mode
		mode = nil
	}
	qp.returnMode = pyval.Lower(pyval.Strip(pyval.StrOrEmpty(mode))) // str(): ['meta'], not JSON
	if qp.returnMode == "" {
		qp.returnMode = "rendered"
	}
	switch qp.returnMode {
	case "rendered", "meta", "both":
	default:
		return nil, failf("Unknown memory_query return mode: %s", qp.returnMode)
	}

	var rawIDs []any
	rawIDs, qp.explicitGiven = querySpanIDs(p)
	if qp.explicitGiven && qp.scope == "all" {
		// Python takes every value that is not an index (an int, a bool
		// included, or a digit string) as the artifact id str(x) names,
		// so 1.0 is the id "1.0" here where other scopes drop it.
		for _, x := range rawIDs {
			// A digit string int() refuses is still an index to
			// isdigit(), so it is refused here, not raised.
			ref, ok, err := parseSpanRef(x)
			if (ok && ref.isIdx) || err != nil {
				// Python refuses indices after loading the owners.
				qp.explicit = nil
				qp.explicitErr = failf("memory_query scope='all' requires explicit span_ids as artifact ids (no indices)")
				break
			}
			if !ok {
				ref = spanRef{id: pyval.Strip(pyval.Str(x))}
			}
			if ref.id != "" {
				qp.explicit = append(qp.explicit, ref)
			}
		}
	} else if qp.explicitGiven {
		// Python raises int()'s error when it resolves the ids, after
		// loading the owners: kept until then.
		qp.explicit, qp.explicitErr = parseSpanRefs(rawIDs)
	}

	qp.query = pyval.Lower(pyval.Strip(pyStrOrEmpty(p["query"]))) // a falsy query is none
	qp.filter.parse(p)

	qp.limitSpans = max(payloadInt(p["limit_spans"], 5), 1)
	if p["deep"] == nil {
		qp.deep = qp.query != ""
	} else {
		qp.deep = truthy(p["deep"])
	}
	qp.deepLimitSpans = max(payloadInt(p["deep_limit_spans"], 50), 1)
	qp.deepLimitMsgs = max(payloadInt(p["deep_limit_messages_per_span"], 400), 1)
	qp.connected = truthy(p["connected"])
	qp.neighborHops = max(payloadInt(p["neighbor_hops"], 1), 0)
	if l, ok := p["connect_by"].([]any); ok {
		// Python keeps str/int/float items (a bool is an int) as str()
		// writes them: true names the tag key "True".
		for _, x := range l {
			if _, isStr := x.(string); !isStr && !pyval.IsNumber(x) {
				continue
			}
			if s := pyval.Str(x); pyval.Strip(s) != "" {
				qp.connectBy = append(qp.connectBy, s)
			}
		}
	} else {
		qp.connectBy = []string{"topic", "person"}
	}
	qp.maxMessages = payloadInt(p["max_messages"], -1)
	if qp.maxMessages < -1 {
		qp.maxMessages = -1
	}
	if qp.maxMessages != -1 && qp.maxMessages < 1 {
		qp.maxMessages = 1
	}

	if policy != nil {
		// Python's order and words; a default over the level's cap is
		// clamped (and reported) like a value the caller gave.
		provided := func(k string) bool { _, ok := p[k]; return ok }
		e := &effort{policy: policy}
		if !provided("limit_spans") {
			qp.limitSpans = policy.limitSpansDefault
		}
		qp.limitSpans = e.clamp("limit_spans", qp.limitSpans, policy.limitSpansMax)
		if qp.deep && !policy.deepAllowed {
			e.warnf("deep scan disabled (not allowed at this level)")
			qp.deep = false
		}
		if qp.deep && !provided("deep_limit_spans") {
			qp.deepLimitSpans = min(qp.deepLimitSpans, policy.deepLimitSpansMax)
		}
		qp.deepLimitSpans = e.clamp("deep_limit_spans", qp.deepLimitSpans, policy.deepLimitSpansMax)
		if qp.deep && !provided("deep_limit_messages_per_span") {
			qp.deepLimitMsgs = min(qp.deepLimitMsgs, policy.deepLimitMessagesPerSpanMax)
		}
		qp.deepLimitMsgs = e.clamp("deep_limit_messages_per_span", qp.deepLimitMsgs, policy.deepLimitMessagesPerSpanMax)
		if qp.connected && !policy.connectedAllowed {
			e.warnf("connected expansion disabled (not allowed at this level)")
			qp.connected = false
		}
		qp.neighborHops = e.clamp("neighbor_hops", qp.neighborHops, policy.neighborHopsMax)
		switch {
		case !provided("max_messages"):
			qp.maxMessages = policy.maxMessagesDefault
		case qp.maxMessages == -1:
			e.warnf("max_messages=-1 (unbounded) is not allowed; clamped to %d", policy.maxMessagesMax)
			qp.maxMessages = policy.maxMessagesMax
		default:
			qp.maxMessages = e.clamp("max_messages", qp.maxMessages, policy.maxMessagesMax)
		}
		e.applied = map[string]any{
			"limit_spans": qp.limitSpans, "deep": qp.deep, "deep_limit_spans": qp.deepLimitSpans,
			"deep_limit_messages_per_span": qp.deepLimitMsgs, "connected": qp.connected,
			"neighbor_hops": qp.neighborHops, "max_messages": qp.maxMessages,
		}
		qp.effort = e
	}
	return qp, nil
}

// readRange reads since/until. It is called only on the filtering path:
// explicit span ids bypass every filter, and Python builds its TimeRange
// only in that branch, so with ids a since/until that is no timestamp is
// never read and the query answers.
func (f *spanFilter) readRange(p map[string]any) error {
	for _, k := range []string{"since", "until"} {
		if !truthy(p[k]) { // Python: a falsy bound is no bound
			continue
		}
		s := pyval.Strip(anyText(p[k]))
		if s == "" {
			continue
		}
		t, err := durable.ParseTime(s)
		if err != nil {
			return failf("memory_query invalid %s timestamp: %s", k, s)
		}
		if k == "since" {
			f.since = t
		} else {
			f.until = t
		}
		f.hasRange = true
	}
	return nil
}

// parse reads tags/tags_mode, authors and locations.
func (f *spanFilter) parse(p map[string]any) {
	if tags, ok := p["tags"].(map[string]any); ok {
		f.tags = map[string][]string{}
		// In key order: keys equal but for case fold into one, and which
		// one wins must not change from one run to the next.
		for _, k := range pyjson.SortedKeys(tags) {
			v := tags[k]
			key := pyval.Lower(pyval.Strip(k))
			if key == "" || key == "kind" {
				continue
			}
			var vals []string
			switch x := v.(type) {
			case string:
				vals = []string{x}
			case []any:
				for _, y := range x {
					if s, ok := y.(string); ok {
						vals = append(vals, s)
					}
				}
			}
			for i := range vals {
				vals[i] = pyval.Lower(pyval.Strip(vals[i]))
			}
			if vals = dedupStrings(vals); len(vals) > 0 {
				f.tags[key] = vals
			}
		}
	}
	mode := p["tags_mode"]
	for _, k := range []string{"tagsMode", "tag_mode"} {
		if mode == nil {
			mode = p[k]
		}
	}
	switch pyval.Lower(pyval.Strip(anyText(mode))) {
	case "any", "or":
		f.tagsAny = true
	}
	authors := p["usernames"]
	if _, ok := p["authors"]; ok {
		authors = p["authors"]
	}
	f.authors = lowerSet(authors)
	if len(f.authors) == 0 {
		f.authors = lowerSet(p["users"])
	}
	locs := p["location"]
	if _, ok := p["locations"]; ok {
		locs = p["locations"]
	}
	f.locations = lowerSet(locs)
}

// lowerSet reads a string or a list of strings as a lower-cased set.
func lowerSet(v any) map[string]bool {
	var items []any
	switch x := v.(type) {
	case string:
		items = []any{x}
	case []any:
		items = x
	}
	out := map[string]bool{}
	for _, it := range items {
		if s, ok := it.(string); ok && pyval.Strip(s) != "" {
			out[pyval.Lower(pyval.Strip(s))] = true
		}
	}
	return out
}

// newQueryOwner indexes an owner run (nil: a synthetic owner not created
// yet, with no spans).
func newQueryOwner(run *durable.RunState) *queryOwner {
	qo := &queryOwner{run: run, summaries: map[string]string{}}
	if run == nil {
		return qo
	}
	qo.stored = spanList(run)
	for _, s := range qo.stored {
		m, ok := s.(map[string]any)
		if !ok || m["kind"] == "evidence" {
			continue
		}
		qo.newest = append(qo.newest, m)
	}
	sort.SliceStable(qo.newest, func(i, j int) bool {
		return anyText(qo.newest[i]["created_at"]) > anyText(qo.newest[j]["created_at"])
	})
	cx, _ := run.Vars["context"].(map[string]any)
	msgs, ok := cx["messages"].([]any)
	if !ok {
		msgs = asList(cx["messages"])
	}
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		meta, _ := mm["metadata"].(map[string]any)
		if mm["role"] != "system" || meta["kind"] != "memory_summary" {
			continue
		}
		if id, ok := meta["source_artifact_id"].(string); ok && id != "" {
			qo.summaries[id] = pyval.StrOrEmpty(mm["content"]) // str(content or "")
		}
	}
	return qo
}

// selectFrom returns the artifact ids one owner contributes.
func (q *memQuery) selectFrom(qo *queryOwner, qp *queryParams) []string {
	var selected []string
	for _, s := range q.filter(qo, &qp.filter, qp.query, qp.limitSpans) {
		selected = append(selected, spanArtifactID(s))
	}
	if qp.deep && qp.query != "" {
		cands := q.filter(qo, &qp.filter, "", qp.deepLimitSpans)
		selected = dedupStrings(append(selected, q.deepScan(cands, qp)...))
	}
	if qp.connected && len(selected) > 0 {
		cands := q.filter(qo, &qp.filter, "", int64(max(1000, len(qo.newest))))
		selected = dedupStrings(expandConnected(cands, selected, qp.connectBy, qp.neighborHops,
			max(int(qp.limitSpans), len(selected))))
	}
	return selected
}

// filter applies the metadata filter and (when query is not "") the
// keyword match to one owner's spans, newest first, at most limit.
func (q *memQuery) filter(qo *queryOwner, f *spanFilter, query string, limit int64) []map[string]any {
	var out []map[string]any
	for _, span := range qo.newest {
		if int64(len(out)) >= limit {
			break
		}
		id := spanArtifactID(span)
		if id == "" {
			continue
		}
		if f.hasRange && !f.inRange(span) {
			continue
		}
		var meta *artifact.Metadata
		if len(f.tags) > 0 || query != "" {
			meta = q.meta(id)
		}
		if len(f.tags) > 0 && !tagsMatch(span, meta, f.tags, f.tagsAny) {
			continue
		}
		if len(f.authors) > 0 {
			a, _ := span["created_by"].(string)
			if !f.authors[pyval.Lower(pyval.Strip(a))] {
				continue
			}
		}
		if len(f.locations) > 0 {
			loc, _ := span["location"].(string)
			if pyval.Strip(loc) == "" {
				tags, _ := span["tags"].(map[string]any)
				loc, _ = tags["location"].(string)
			}
			if !f.locations[pyval.Lower(pyval.Strip(loc))] {
				continue
			}
		}
		if query != "" && !strings.Contains(q.haystack(qo, span, meta), query) {
			continue
		}
		out = append(out, span)
	}
	return out
}

// inRange reports whether a span's [from, to] intersects [since, until];
// a span without both timestamps does not.
func (f *spanFilter) inRange(span map[string]any) bool {
	from, err1 := durable.ParseTime(anyText(span["from_timestamp"]))
	to, err2 := durable.ParseTime(anyText(span["to_timestamp"]))
	if err1 != nil || err2 != nil || from.IsZero() || to.IsZero() {
		return false
	}
	if !f.since.IsZero() && to.Before(f.since.Time) {
		return false
	}
	if !f.until.IsZero() && from.After(f.until.Time) {
		return false
	}
	return true
}

// tagsMatch checks the required tags against the span's tags (the
// current index, which MEMORY_TAG edits), then the artifact's tags for
// keys the span lacks, then kind / compression_mode / focus.
func tagsMatch(span map[string]any, meta *artifact.Metadata, required map[string][]string, anyMode bool) bool {
	have := map[string]string{}
	put := func(k, v string) {
		k, v = pyval.Lower(pyval.Strip(k)), pyval.Lower(pyval.Strip(v))
		if _, set := have[k]; k != "" && v != "" && !set {
			have[k] = v
		}
	}
	if tags, ok := span["tags"].(map[string]any); ok {
		for _, k := range pyjson.SortedKeys(tags) { // stable, as in the filter
			if s, ok := tags[k].(string); ok {
				put(k, s)
			}
		}
	}
	if meta != nil {
		for _, k := range slices.Sorted(maps.Keys(meta.Tags)) {
			put(k, meta.Tags[k])
		}
	}
	for _, k := range []string{"kind", "compression_mode", "focus"} {
		if s, ok := span[k].(string); ok {
			put(k, s)
		}
	}
	matched := 0
	for k, vals := range required {
		ok := false
		for _, v := range vals {
			if have[k] == v {
				ok = true
				break
			}
		}
		if ok {
			matched++
			if anyMode {
				return true
			}
		} else if !anyMode {
			return false
		}
	}
	return !anyMode || matched > 0
}

// haystack is the lower-cased text a keyword query searches in a span.
func (q *memQuery) haystack(qo *queryOwner, span map[string]any, meta *artifact.Metadata) string {
	id := spanArtifactID(span)
	var parts []string
	if s := qo.summaries[id]; s != "" {
		parts = append(parts, s)
	}
	if span["kind"] == "memory_note" {
		if note := q.noteText(qo, id); note != "" {
			parts = append(parts, note)
		}
	}
	for _, k := range []string{"kind", "compression_mode", "focus", "from_timestamp", "to_timestamp", "created_by", "location"} {
		if s, ok := span[k].(string); ok && s != "" {
			parts = append(parts, s)
		}
	}
	if tags, ok := span["tags"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			if s, ok := tags[k].(string); ok && s != "" {
				parts = append(parts, k, s)
			}
		}
	}
	if meta != nil {
		parts = append(parts, meta.ContentType)
		for _, k := range slices.Sorted(maps.Keys(meta.Tags)) {
			parts = append(parts, k, meta.Tags[k])
		}
	}
	return pyval.Lower(strings.Join(parts, " "))
}

// noteText is a note's searchable text: the note, then the summaries of
// the spans it cites.
func (q *memQuery) noteText(qo *queryOwner, id string) string {
	payload, _ := q.load(id).(map[string]any)
	if payload == nil {
		return ""
	}
	var parts []string
	if s, ok := payload["note"].(string); ok && pyval.Strip(s) != "" {
		parts = append(parts, pyval.Strip(s))
	}
	if src, ok := payload["sources"].(map[string]any); ok {
		ids, _ := src["span_ids"].([]any)
		for _, x := range ids {
			if sid, ok := x.(string); ok {
				if s := pyval.Strip(qo.summaries[pyval.Strip(sid)]); s != "" {
					parts = append(parts, s)
				}
			}
		}
	}
	return pyval.Strip(strings.Join(parts, "\n"))
}

// deepScan returns the spans (among cands, at most deepLimitSpans scanned)
// whose archived messages contain the query.
func (q *memQuery) deepScan(cands []map[string]any, qp *queryParams) []string {
	var out []string
	var scanned int64
	for _, s := range cands {
		if scanned >= qp.deepLimitSpans {
			break
		}
		id := spanArtifactID(s)
		if id == "" {
			continue
		}
		scanned++
		payload, _ := q.load(id).(map[string]any)
		msgs, _ := payload["messages"].([]any)
		for i, m := range msgs {
			if int64(i) >= qp.deepLimitMsgs {
				break
			}
			mm, _ := m.(map[string]any)
			if !truthy(mm["content"]) {
				continue
			}
			if strings.Contains(pyval.Lower(pyval.Str(mm["content"])), qp.query) { // q in str(content).lower()
				out = append(out, id)
				break
			}
		}
	}
	return dedupStrings(out)
}

// expandConnected widens seeds with their time neighbours (hops on each
// side, spans ordered by from_timestamp or created_at) and the spans that
// share a value of one of keys; at most limit ids.
func expandConnected(spans []map[string]any, seeds, keys []string, hops int64, limit int) []string {
	ordered := make([]map[string]any, 0, len(spans))
	for _, s := range spans {
		if spanArtifactID(s) != "" {
			ordered = append(ordered, s)
		}
	}
	sortKey := func(s map[string]any) (string, string) {
		from, created := anyText(s["from_timestamp"]), anyText(s["created_at"])
		if from == "" {
			from = created
		}
		return from, created
	}
	sort.SliceStable(ordered, func(i, j int) bool {
		a1, a2 := sortKey(ordered[i])
		b1, b2 := sortKey(ordered[j])
		if a1 != b1 {
			return a1 < b1
		}
		return a2 < b2
	})
	idx := map[string]int{}
	byTag := map[[2]string][]string{}
	for i, s := range ordered {
		id := spanArtifactID(s)
		idx[id] = i
		tags, _ := s["tags"].(map[string]any)
		for _, k := range keys {
			if v, ok := tags[k].(string); ok && v != "" {
				byTag[[2]string{k, v}] = append(byTag[[2]string{k, v}], id)
			}
		}
	}
	var out []string
	for _, id := range seeds {
		if len(out) >= limit {
			break
		}
		out = append(out, id)
		i, ok := idx[id]
		if !ok {
			continue
		}
		// Hops past the span list add nothing; an absurd neighbor_hops
		// must not spin here.
		for d := 1; int64(d) <= min(hops, int64(len(ordered))); d++ {
			for _, j := range []int{i - d, i + d} {
				if j >= 0 && j < len(ordered) {
					out = append(out, spanArtifactID(ordered[j]))
				}
			}
		}
		tags, _ := ordered[i]["tags"].(map[string]any)
		for _, k := range keys {
			if v, ok := tags[k].(string); ok && v != "" {
				out = append(out, byTag[[2]string{k, v}]...)
			}
		}
	}
	out = dedupStrings(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// load returns an artifact's JSON content, or nil when it is missing or
// not JSON (recall is best effort).
func (q *memQuery) load(id string) any {
	if v, ok := q.json[id]; ok {
		return v
	}
	v, err := artifact.LoadJSON(q.ctx, q.arts, id)
	if err != nil {
		v = nil
	}
	q.json[id] = v
	return v
}

// meta returns an artifact's metadata, or nil.
func (q *memQuery) meta(id string) *artifact.Metadata {
	if m, ok := q.metas[id]; ok {
		return m
	}
	m, err := q.arts.Metadata(q.ctx, id)
	if err != nil {
		m = nil
	}
	q.metas[id] = m
	return m
}

// matchMeta is one entry of meta.matches.
func matchMeta(id string, span map[string]any) map[string]any {
	tags, ok := span["tags"].(map[string]any)
	if !ok {
		tags = map[string]any{}
	}
	m := map[string]any{
		"span_id": id, "kind": span["kind"], "created_at": span["created_at"],
		"from_timestamp": span["from_timestamp"], "to_timestamp": span["to_timestamp"],
		"tags": pyjson.CloneObject(tags),
	}
	for _, k := range []string{"created_by", "location", "note_preview", "message_count", "summary_message_id"} {
		if v, ok := span[k]; ok {
			m[k] = pyjson.Clone(v)
		}
	}
	return m
}

// render writes the rendered text of a query (format in handleMemoryQuery).
func (q *memQuery) render(byID map[string]map[string]any, summaries map[string]string, selected []string, maxMessages int64) string {
	if len(selected) == 0 {
		return "No matching memory spans."
	}
	lines := []string{"Recalled memory spans (provenance-preserving):"}
	remaining := maxMessages // -1: unlimited
	limited := maxMessages != -1
	for i, id := range selected {
		span := byID[id]
		if span == nil {
			span = map[string]any{}
		}
		kind := strOrDefault(span["kind"], "span")
		count := ""
		if n, ok := AsInt(span["message_count"]); ok && n != 0 {
			count = strconv.FormatInt(n, 10)
		} else if s, ok := span["message_count"].(string); ok {
			count = s
		}
		// Python writes created_by and location only for strings, and a
		// note shows its payload's location unless the span has one.
		location := strippedString(span["location"])
		lines = append(lines, "", "["+strconv.Itoa(i+1)+"] span_id="+id+" kind="+kind+" msgs="+count+
			" created_at="+strOrDefault(span["created_at"], ""))
		from, to := strOrDefault(span["from_timestamp"], ""), strOrDefault(span["to_timestamp"], "")
		if from != "" || to != "" {
			lines = append(lines, "    time_range: "+from+" .. "+to)
		}
		if by := strippedString(span["created_by"]); by != "" {
			lines = append(lines, "    created_by: "+by)
		}
		if location != "" {
			lines = append(lines, "    location: "+location)
		}
		if tags, ok := span["tags"].(map[string]any); ok {
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(tags)) {
				if s, ok := tags[k].(string); ok && s != "" {
					kv = append(kv, k+"="+s)
				}
			}
			if len(kv) > 0 {
				lines = append(lines, "    tags: "+strings.Join(kv, ", "))
			}
		}
		// Python tests the summary before stripping it: a blank one
		// still gives an empty line.
		if s := summaries[id]; s != "" {
			lines = append(lines, "    summary: "+pyval.Strip(s))
		}
		if limited && remaining <= 0 {
			continue
		}
		payload, ok := q.load(id).(map[string]any)
		if !ok {
			lines = append(lines, "    (artifact payload unavailable)")
			continue
		}
		if _, hasNote := payload["note"]; kind == "memory_note" || hasNote {
			lines = append(lines, renderNote(payload, location)...)
			continue
		}
		msgs, ok := payload["messages"].([]any)
		if !ok {
			lines = append(lines, "    (artifact missing messages)")
			continue
		}
		rendered, total := 0, 0
		for _, m := range msgs {
			mm, ok := m.(map[string]any)
			if !ok {
				continue
			}
			total++
			if limited && remaining <= 0 {
				continue
			}
			role := strOrDefault(mm["role"], "unknown")
			prefix := "    - " + role + ": "
			if ts := strOrDefault(mm["timestamp"], ""); ts != "" {
				prefix = "    - " + ts + " " + role + ": "
			}
			content := pyval.StrOrEmpty(mm["content"]) // str(content or "")
			lines = append(lines, prefix+content)
			rendered++
			if limited {
				remaining--
			}
		}
		if limited && rendered < total {
			lines = append(lines, "    (remaining "+strconv.Itoa(total-rendered)+" messages omitted by max_messages="+
				strconv.FormatInt(maxMessages, 10)+")")
		}
	}
	return strings.Join(lines, "\n")
}

// renderNote renders the body of a memory_note span.
func renderNote(payload map[string]any, spanLocation string) []string {
	var lines []string
	if note := pyval.Strip(strOrDefault(payload["note"], "")); note != "" {
		lines = append(lines, "    note: "+note)
	} else {
		lines = append(lines, "    (note payload missing note text)")
	}
	if spanLocation == "" {
		if loc := strippedString(payload["location"]); loc != "" {
			lines = append(lines, "    location: "+loc)
		}
	}
	src, _ := payload["sources"].(map[string]any)
	if run, ok := src["run_id"].(string); ok && run != "" {
		lines = append(lines, "    sources.run_id: "+run)
	}
	for _, k := range []string{"span_ids", "message_ids"} {
		if ids := renderedIDs(src[k]); len(ids) > 0 {
			if len(ids) > 12 {
				ids = ids[:12]
			}
			lines = append(lines, "    sources."+k+": "+strings.Join(ids, ", "))
		}
	}
	return lines
}

// renderedIDs is the renderer's [str(x) for x in ids if isinstance(x,
// (str, int))]: unlike MEMORY_NOTE's idList it neither strips nor
// deduplicates, which shows in a note artifact another writer stored.
func renderedIDs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		switch y := x.(type) {
		case string:
			out = append(out, y)
		case bool:
			out = append(out, pyval.Str(y))
		default:
			if pyval.IsInt(y) || isIntLiteral(y) {
				out = append(out, pyval.Str(y))
			}
		}
	}
	return out
}

// strippedString is a string value stripped, "" for any other value.
func strippedString(v any) string {
	s, _ := v.(string)
	return pyval.Strip(s)
}

// strOrDefault is Python's str(v or def): def for a falsy v, other values
// as str() writes them (a list or object as its repr).
func strOrDefault(v any, def string) string {
	if s, ok := v.(string); ok {
		if s == "" {
			return def
		}
		return s
	}
	if !truthy(v) {
		return def
	}
	return pyval.Str(v)
}
