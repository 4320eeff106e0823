package runtime

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// rehydratePreviewMax bounds the preview of what was inserted.
const rehydratePreviewMax = 360

// MEMORY_REHYDRATE: inserts archived spans into context.messages of the
// requesting run (or payload.target_run_id): a conversation_span inserts
// its archived messages, a memory_note one "[MEMORY NOTE]" system message;
// other kinds are skipped. Messages are deduplicated by
// metadata.message_id (dedup_by "message_id"; any other value disables
// dedup), marked metadata.rehydrated / source_artifact_id, capped by
// max_messages over all spans, and placed after the span's summary
// message (after_summary, the default; falls back to after_system),
// after the leading system messages (after_system) or at the end.
//
// The result is not a tool envelope: {inserted, skipped, artifacts:[{span_id,
// inserted, skipped, error, kind, preview}]}, plus effort when
// recall_level is given and warnings when something was clamped.
func handleMemoryRehydrate(ctx context.Context, req *EffectRequest) (Outcome, error) {
	out, err := memoryRehydrate(ctx, req)
	if err != nil {
		return memOutcome(err)
	}
	return out, nil
}

func memoryRehydrate(ctx context.Context, req *EffectRequest) (Outcome, error) {
	arts, err := requireArtifacts(req)
	if err != nil {
		return Outcome{}, err
	}
	EnsureNamespaces(req.Run.Vars)
	p := req.Effect.Payload
	// First, as Python's: an unknown level fails even an empty recall.
	policy, err := parseRecallLevel(firstPresent(p, "recall_level", "recallLevel"))
	if err != nil {
		return Outcome{}, err
	}
	// refErr (a digit string int() refuses) fails the effect where
	// Python's resolution raises it: once the target run is loaded.
	refs, n, given, refErr := rehydrateSpanRefs(p)
	if !given {
		return Outcome{}, failf("MEMORY_REHYDRATE requires payload.span_ids (or legacy span_id)")
	}
	// A valid no-op (a recall that found nothing) only when no value was
	// given at all, as Python's `if not span_ids` on the raw list: ids
	// that name nothing ([""], a blank span_id) still load and check the
	// target run ("Unknown target_run_id: …") and resolve to nothing
	// below.
	if n == 0 {
		return Completed(map[string]any{"inserted": int64(0), "skipped": int64(0), "artifacts": []any{}}), nil
	}
	// Python: str(x or default).strip() or default.
	placement := cmp.Or(pyval.Strip(pyStrOr(p["placement"], "after_summary")), "after_summary")
	dedupBy := cmp.Or(pyval.Strip(pyStrOr(p["dedup_by"], "message_id")), "message_id")
	// -1 means no cap. Python reads the cap with int(): a bool is 0 or
	// 1, a string in int()'s syntax is its number; what int() refuses
	// (or a negative cap) leaves the messages uncapped.
	maxMessages := int64(-1)
	if v := p["max_messages"]; v != nil {
		if n, ok := pyInt(v); ok && n >= 0 {
			maxMessages = n
		}
	}
	var eff *effort
	if policy != nil {
		// Python's rules and words: absent or unreadable → the default;
		// below 1 → the default, with a warning; over the cap → clamped.
		eff = &effort{policy: policy}
		n, ok := int64(0), false
		if v := p["max_messages"]; v != nil {
			if _, isBool := v.(bool); !isBool {
				// int(float(raw)): Python's float() syntax, and int()
				// raises on inf/nan, so those fall back to the default.
				if f, err := pyval.ToFloat(v); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
					n, ok = pyval.SaturatedInt(f), true
				}
			}
		}
		if !ok {
			n = policy.rehydrateMaxMessagesDefault
		}
		if n < 1 {
			eff.warnf("max_messages must be >=1; using %d", policy.rehydrateMaxMessagesDefault)
			n = policy.rehydrateMaxMessagesDefault
		}
		maxMessages = eff.clamp("max_messages", n, policy.rehydrateMaxMessagesMaxLimit)
		eff.applied = map[string]any{"max_messages": maxMessages}
	}

	target, err := baseRun(ctx, req)
	if err != nil {
		return Outcome{}, err
	}
	if refErr != nil {
		return Outcome{}, refErr
	}
	if skipOnReplay(req, target.RunID) {
		// Nothing of the requesting run's to redo; the recorded result
		// stands.
		return Completed(nil), nil
	}
	if err := loadSpanIndex(ctx, req.Runtime.Artifacts(), target); err != nil {
		return Outcome{}, err
	}
	spans := spansNewestFirst(spanList(target)) // indices count newest first
	kinds := map[string]string{}
	for _, s := range spans {
		if id := spanArtifactID(s); id != "" {
			if _, seen := kinds[id]; !seen {
				// str(s.get("kind") or "").strip(): a kind 7 is "7",
				// which is no kind rehydrate loads.
				kinds[id] = pyval.Strip(pyStrOrEmpty(s.(map[string]any)["kind"]))
			}
		}
	}
	var ids []string
	for _, ref := range refs {
		ids = append(ids, ref.resolve(spans))
	}
	ids = dedupStrings(ids)
	if len(ids) == 0 {
		return Completed(map[string]any{"inserted": int64(0), "skipped": int64(0), "artifacts": []any{}}), nil
	}

	var todo []string
	var skippedKinds []any
	for _, id := range ids {
		if k := kinds[id]; k != "" && k != "conversation_span" && k != "memory_note" {
			skippedKinds = append(skippedKinds, map[string]any{
				"span_id": id, "inserted": int64(0), "skipped": int64(0), "error": nil, "kind": k,
			})
			continue
		}
		todo = append(todo, id)
	}
	loaded, err := loadSpanMessages(ctx, arts, todo)
	if err != nil {
		return Outcome{}, err
	}

	var res map[string]any
	err = writeOwner(ctx, req, memOwner{id: target.RunID}, func(run *durable.RunState) error {
		res = rehydrateInto(run, todo, loaded, kinds, placement, dedupBy, maxMessages)
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	res["artifacts"] = append(res["artifacts"].([]any), skippedKinds...)
	addEffort(res, eff)
	return Completed(res), nil
}

// addEffort sets effort and warnings, null when there are none.
func addEffort(res map[string]any, eff *effort) {
	res["effort"], res["warnings"] = nil, nil
	if r := eff.report(); r != nil {
		res["effort"] = r
	}
	if w := eff.warningList(); w != nil {
		res["warnings"] = w
	}
}

// spanMessages is what one span contributes to context: its messages, or
// an error code ("missing_messages").
type spanMessages struct {
	messages []any
	err      string
}

// loadSpanMessages loads the artifacts of spans as message lists. A
// missing artifact or one with neither messages nor a note gives
// "missing_messages"; store failures are errors.
func loadSpanMessages(ctx context.Context, arts artifact.Store, ids []string) (map[string]spanMessages, error) {
	out := make(map[string]spanMessages, len(ids))
	for _, id := range ids {
		v, err := artifact.LoadJSON(ctx, arts, id)
		if errors.Is(err, artifact.ErrNotFound) || errors.Is(err, artifact.ErrInvalidID) {
			out[id] = spanMessages{err: "missing_messages"}
			continue
		}
		if err != nil {
			var synErr *pyjson.SyntaxError
			if errors.As(err, &synErr) {
				out[id] = spanMessages{err: "missing_messages"}
				continue
			}
			return nil, err
		}
		m, _ := v.(map[string]any)
		if msgs, ok := m["messages"].([]any); ok {
			out[id] = spanMessages{messages: msgs}
			continue
		}
		if note, ok := m["note"].(string); ok && pyval.Strip(note) != "" {
			created, _ := m["created_at"].(string)
			out[id] = spanMessages{messages: []any{noteMessage(id, pyval.Strip(note), created)}}
			continue
		}
		out[id] = spanMessages{err: "missing_messages"}
	}
	return out, nil
}

// rehydrateInto inserts the loaded spans into run's context and returns
// {inserted, skipped, artifacts}. maxMessages < 0 means no cap.
func rehydrateInto(run *durable.RunState, ids []string, loaded map[string]spanMessages, kinds map[string]string,
	placement, dedupBy string, maxMessages int64) map[string]any {
	ci := newContextInserter(run, placement, dedupBy)
	var inserted, skipped int64
	artifacts := []any{}
	entry := func(id string, ins, skip int64, errCode, preview string) {
		e := map[string]any{"span_id": id, "inserted": ins, "skipped": skip, "error": nullable(errCode),
			"kind": nullable(kinds[id]), "preview": nullable(preview)}
		artifacts = append(artifacts, e)
	}
	for _, id := range ids {
		if maxMessages >= 0 && inserted >= maxMessages {
			entry(id, 0, 0, "max_messages", "")
			continue
		}
		sm := loaded[id]
		if sm.err != "" {
			entry(id, 0, 0, sm.err, "")
			continue
		}
		limit := int64(-1)
		if maxMessages >= 0 {
			limit = maxMessages - inserted
		}
		ins, skip, preview := ci.insert(id, sm.messages, limit)
		inserted += ins
		skipped += skip
		entry(id, ins, skip, "", preview)
	}
	ci.done()
	return map[string]any{"inserted": inserted, "skipped": skipped, "artifacts": artifacts}
}

// contextInserter inserts messages into a run's context.messages with
// dedup, then writes the list back (also to output.messages when the run
// has an output object).
type contextInserter struct {
	run       *durable.RunState
	active    []any
	detached  bool // context.messages is not JSON: left in place, not written
	keys      map[string]bool
	placement string
	dedupBy   string
}

func newContextInserter(run *durable.RunState, placement, dedupBy string) *contextInserter {
	cx := namespace(run.Vars, "context")
	active, ok := cx["messages"].([]any)
	if !ok {
		// A node's []map[string]any is kept, as after a checkpoint; a
		// value that is not JSON is left in place to fail the run at its
		// commit naming it, which writing the list back would erase.
		active, ok = writableList(cx["messages"])
	}
	ci := &contextInserter{run: run, active: active, detached: !ok, keys: map[string]bool{}, placement: placement, dedupBy: dedupBy}
	for _, m := range active {
		if k := ci.key(m); k != "" {
			ci.keys[k] = true
		}
	}
	return ci
}

// key is a message's dedup key ("" when it has none).
func (ci *contextInserter) key(m any) string {
	if ci.dedupBy != "message_id" {
		return ""
	}
	mm, _ := m.(map[string]any)
	meta, _ := mm["metadata"].(map[string]any)
	id, _ := meta["message_id"].(string)
	return id
}

// insert places copies of msgs (at most limit when limit ≥ 0) and
// returns how many were inserted and skipped as duplicates, and a preview.
func (ci *contextInserter) insert(artifactID string, msgs []any, limit int64) (inserted, skipped int64, preview string) {
	var add []any
	for _, m := range msgs {
		mm, ok := m.(map[string]any)
		if !ok {
			continue
		}
		c := pyjson.CloneObject(mm)
		meta, ok := c["metadata"].(map[string]any)
		if !ok {
			meta = map[string]any{}
			c["metadata"] = meta
		}
		if _, set := meta["rehydrated"]; !set {
			meta["rehydrated"] = true
		}
		if _, set := meta["source_artifact_id"]; !set {
			meta["source_artifact_id"] = artifactID
		}
		if k := ci.key(c); k != "" {
			if ci.keys[k] {
				skipped++
				continue
			}
			ci.keys[k] = true
		}
		add = append(add, c)
	}
	if limit >= 0 && int64(len(add)) > limit {
		add = add[:limit]
	}
	at := ci.index(artifactID)
	next := make([]any, 0, len(ci.active)+len(add))
	next = append(next, ci.active[:at]...)
	next = append(next, add...)
	next = append(next, ci.active[at:]...)
	ci.active = next
	return int64(len(add)), skipped, rehydratePreview(add)
}

// index is where a span's messages go.
func (ci *contextInserter) index(artifactID string) int {
	if ci.placement == "end" {
		return len(ci.active)
	}
	if ci.placement != "after_system" {
		for i, m := range ci.active {
			mm, _ := m.(map[string]any)
			meta, _ := mm["metadata"].(map[string]any)
			if mm["role"] == "system" && meta["kind"] == "memory_summary" && meta["source_artifact_id"] == artifactID {
				return i + 1
			}
		}
	}
	i := 0
	for i < len(ci.active) {
		mm, _ := ci.active[i].(map[string]any)
		if mm == nil || mm["role"] != "system" {
			break
		}
		i++
	}
	return i
}

// done writes the message list back to the run.
func (ci *contextInserter) done() {
	if ci.detached {
		return
	}
	if ci.active == nil {
		ci.active = []any{}
	}
	namespace(ci.run.Vars, "context")["messages"] = ci.active
	if ci.run.Output != nil {
		ci.run.Output["messages"] = pyjson.Clone(ci.active)
	}
}

// rehydratePreview shows the first three inserted messages ("role:
// content", a memory note as is), at most 360 characters.
func rehydratePreview(msgs []any) string {
	var lines []string
	for i, m := range msgs {
		if i >= 3 {
			break
		}
		mm, _ := m.(map[string]any)
		// Python: str(m.get(k) or "").strip(), a list content as its repr.
		role := pyval.Strip(pyval.StrOrEmpty(mm["role"]))
		content := pyval.Strip(pyval.StrOrEmpty(mm["content"]))
		switch {
		case content == "":
		case strings.HasPrefix(content, "[MEMORY NOTE]") || role == "":
			lines = append(lines, content)
		default:
			lines = append(lines, role+": "+content)
		}
	}
	// Python's _preview_inserted: cut to 357 characters and an ellipsis,
	// not the note preview's marker.
	text := pyval.Strip(strings.Join(lines, "\n"))
	if r := []rune(text); len(r) > rehydratePreviewMax {
		return string(r[:rehydratePreviewMax-3]) + "…"
	}
	return text
}
