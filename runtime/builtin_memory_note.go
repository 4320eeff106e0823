package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// notePreviewMax is the length (in characters) of a span's note_preview.
const notePreviewMax = 160

// truncationMarker ends a preview that was cut.
const truncationMarker = "… (truncated)"

// MEMORY_NOTE: stores a small durable note as a JSON artifact
// {note, sources:{run_id, span_ids, message_ids}, created_at, location?,
// actor_id?, session_id?} tagged {kind:"memory_note", …tags}, appends a
// memory_note span to the scope's owner run and, with keep_in_context,
// inserts the note into context.messages of the base run (the requesting
// run or payload.target_run_id) as a "[MEMORY NOTE]" system message.
//
// The artifact id is derived from the owner run and the effect's
// idempotency key, so an attempt repeated after a crash (whose owner
// write already landed) finds its span and does not append it twice.
func handleMemoryNote(ctx context.Context, req *EffectRequest) (Outcome, error) {
	out, err := memoryNote(ctx, req)
	if err != nil {
		return memOutcome(err)
	}
	return out, nil
}

func memoryNote(ctx context.Context, req *EffectRequest) (Outcome, error) {
	arts, err := requireArtifacts(req)
	if err != nil {
		return Outcome{}, err
	}
	EnsureNamespaces(req.Run.Vars)
	p := req.Effect.Payload
	name := pyStrOr(p["tool_name"], "remember_note")
	callID := pyStrOr(p["call_id"], "memory")

	// Python resolves the base run and the scope owner before it reads
	// the note, so an unknown target or scope is reported first.
	base, err := baseRun(ctx, req)
	if err != nil {
		return Outcome{}, err
	}
	owner, err := req.Runtime.memoryOwner(ctx, base, normScope(p["scope"]))
	if err != nil {
		return Outcome{}, err
	}
	noteText := pyval.Strip(pyStrOrEmpty(p["note"])) // str(note or "").strip()
	if noteText == "" {
		return Outcome{}, failf("MEMORY_NOTE requires payload.note (non-empty string)")
	}

	location := ""
	if s, ok := p["location"].(string); ok {
		location = pyval.Strip(s)
	}
	tags := cleanTags(p["tags"])
	sources, _ := p["sources"].(map[string]any)
	sourceRun := pyval.Strip(pyStrOr(sources["run_id"], req.Run.RunID)) // str(run_id or run.run_id).strip()
	if sourceRun == "" {
		sourceRun = req.Run.RunID
	}
	spanIDs := idList(sources["span_ids"])
	messageIDs := idList(sources["message_ids"])

	createdAt := memNow(req)
	var noteID string
	if req.IdempotencyKey != "" {
		noteID = artifact.ComputeID(owner.id, []byte("memory_note\x00"+req.IdempotencyKey))
	}
	// A replay of a completed record Python made stores no note of its
	// own: the note is the one the recorded result names (its id is not
	// derived from our key), whose span and artifact Python wrote before
	// the record.
	recID, recCreatedAt := recordedNote(req.ReplayedResult)
	reused := recID != "" && recID != noteID
	if reused {
		noteID = recID
	}
	var stored bool
	if noteID != "" {
		// A replay (the run's commit lost after the note was written)
		// writes the same note: its first creation time is kept, which the
		// owner's span already holds.
		if prev, err := artifact.LoadJSON(ctx, arts, noteID); err == nil {
			stored = true
			if m, ok := prev.(map[string]any); ok {
				if t, ok := m["created_at"].(string); ok && t != "" {
					createdAt = t
				}
			}
		}
	}
	if reused && recCreatedAt != "" {
		createdAt = recCreatedAt
	}
	content := map[string]any{
		"note":       noteText,
		"sources":    map[string]any{"run_id": sourceRun, "span_ids": toAny(spanIDs), "message_ids": toAny(messageIDs)},
		"created_at": createdAt,
	}
	if location != "" {
		content["location"] = location
	}
	if req.Run.ActorID != "" {
		content["actor_id"] = req.Run.ActorID
	}
	if sid := noteSessionID(ctx, req, base, owner); sid != "" {
		content["session_id"] = sid
	}
	artTags := stringTags(tags)
	artTags["kind"] = "memory_note"
	spanID := noteID
	if !reused || !stored { // Python's artifact is kept as it wrote it
		put := artifact.PutParams{RunID: owner.id, Tags: artTags, ArtifactID: noteID}
		meta, err := artifact.PutJSON(ctx, arts, content, put)
		if err != nil {
			return Outcome{}, err
		}
		spanID = meta.ArtifactID
	}
	preview := truncateText(noteText, notePreviewMax)

	span := map[string]any{
		"kind":           "memory_note",
		"artifact_id":    spanID,
		"created_at":     createdAt,
		"from_timestamp": createdAt, // notes are point-in-time spans
		"to_timestamp":   createdAt,
		"message_count":  int64(0),
		"note_preview":   preview,
	}
	if location != "" {
		span["location"] = location
	}
	if len(tags) > 0 {
		span["tags"] = pyjson.CloneObject(tags)
	}
	if len(spanIDs) > 0 || len(messageIDs) > 0 {
		span["sources"] = map[string]any{"run_id": sourceRun, "span_ids": toAny(spanIDs), "message_ids": toAny(messageIDs)}
	}
	if req.Run.ActorID != "" {
		span["created_by"] = req.Run.ActorID
	}
	addSpan := func(run *durable.RunState) error {
		if err := loadSpanIndex(ctx, req.Runtime.Artifacts(), run); err != nil {
			return err
		}
		if findSpan(spanList(run), spanID) == nil {
			appendSpan(run, pyjson.CloneObject(span))
		}
		return nil
	}

	keepRaw := p["keep_in_context"]
	if keepRaw == nil {
		keepRaw = p["keepInContext"]
	}
	keep := coerceBool(keepRaw)
	var kept map[string]any
	keepNote := func(run *durable.RunState) {
		ci := newContextInserter(run, "end", "message_id")
		ins, skip, _ := ci.insert(spanID, []any{noteMessage(spanID, noteText, createdAt)}, 1)
		ci.done()
		kept = map[string]any{"inserted": ins, "skipped": skip}
	}

	// A replay writes only the requesting run (see skipOnReplay).
	if keep && owner.id == base.RunID {
		if !skipOnReplay(req, owner.id) {
			err := writeOwner(ctx, req, owner, func(run *durable.RunState) error {
				if err := addSpan(run); err != nil {
					return err
				}
				keepNote(run)
				return nil
			})
			if err != nil {
				return Outcome{}, err
			}
		}
	} else {
		if !skipOnReplay(req, owner.id) {
			if err := writeOwner(ctx, req, owner, addSpan); err != nil {
				return Outcome{}, err
			}
		}
		if keep && !skipOnReplay(req, base.RunID) {
			err := writeOwner(ctx, req, memOwner{id: base.RunID}, func(run *durable.RunState) error {
				keepNote(run)
				return nil
			})
			if err != nil {
				kept = map[string]any{"inserted": int64(0), "skipped": int64(0), "error": err.Error()}
			}
		}
	}

	rendered, err := pyjson.Marshal(tags, pyjson.Style{SortKeys: true})
	if err != nil {
		return Outcome{}, err
	}
	resMeta := map[string]any{"span_id": spanID, "created_at": createdAt, "note_preview": preview}
	if kept != nil {
		resMeta["kept_in_context"] = kept
	}
	text := "Stored memory_note span_id=" + spanID + " tags=" + string(rendered)
	return Completed(memoryEnvelope(callID, name, true, text, "", resMeta)), nil
}

// recordedNote reads the note id (meta.span_id) and creation time of a
// recorded MEMORY_NOTE result; id is "" when the result names no usable
// artifact id.
func recordedNote(result any) (id, createdAt string) {
	res, _ := result.(map[string]any)
	list, _ := res["results"].([]any)
	if len(list) == 0 {
		return "", ""
	}
	first, _ := list[0].(map[string]any)
	meta, _ := first["meta"].(map[string]any)
	id, _ = meta["span_id"].(string)
	if !artifact.ValidID(id) {
		return "", ""
	}
	createdAt, _ = meta["created_at"].(string)
	return id, createdAt
}

// noteSessionID is the session a note belongs to, as Python takes it: the
// owner run's, else the requesting run's (not the target run's: a global
// note asked by a run of another session is that run's).
func noteSessionID(ctx context.Context, req *EffectRequest, base *durable.RunState, o memOwner) string {
	owner := o.sessionID
	switch {
	case o.synthetic():
	case o.id == base.RunID:
		owner = base.SessionID
	default: // a session's root run
		if root, err := req.Runtime.store.RunGet(ctx, o.id); err == nil {
			owner = root.SessionID
		}
	}
	for _, s := range []string{owner, req.Run.SessionID} {
		if s = pyval.Strip(s); s != "" {
			return s
		}
	}
	return ""
}

// noteMessage is the synthetic system message a memory note becomes in
// context.messages (dedup key metadata.message_id "memory_note:<id>").
func noteMessage(artifactID, note, createdAt string) map[string]any {
	return map[string]any{
		"role":      "system",
		"content":   "[MEMORY NOTE]\n" + note,
		"timestamp": createdAt,
		"metadata": map[string]any{
			"kind": "memory_note", "rehydrated": true,
			"source_artifact_id": artifactID, "message_id": "memory_note:" + artifactID,
		},
	}
}

// anyText is the text of a JSON value: strings as is, null as "", other
// values in their JSON form.
func anyText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		return ""
	}
	return string(b)
}

// idList is MEMORY_NOTE's _norm_list: non-blank strings (stripped) and
// ints as str() writes them, a bool included ("True"), first occurrence
// kept; floats and other values are dropped.
func idList(v any) []string {
	return dedupStrings(renderedIDs(v))
}

// isIntLiteral reports a JSON integer past int64 (json.Number digits),
// which Python reads as an int.
func isIntLiteral(v any) bool {
	n, ok := v.(json.Number)
	return ok && isDigits(strings.TrimPrefix(string(n), "-"))
}

// coerceBool reads a boolish flag: booleans, non-zero numbers, and the
// strings true/1/yes/on (case-insensitive).
func coerceBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch pyval.Lower(pyval.Strip(x)) {
		case "true", "1", "yes", "on":
			return true
		}
		return false
	}
	if f, ok := AsFloat(v); ok {
		return f != 0
	}
	return false
}

// truncateText cuts s to at most n characters, ending a cut text with
// the truncation marker.
func truncateText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := n - utf8.RuneCountInString(truncationMarker)
	r := []rune(s)
	return pyval.RStrip(string(r[:keep])) + truncationMarker
}

// spanTagsPath names span's tags in vars, for an error.
func spanTagsPath(spans []any, span map[string]any) string {
	id := spanArtifactID(span)
	for i, s := range spans {
		if spanArtifactID(s) == id {
			return fmt.Sprintf("vars._runtime.memory_spans[%d].tags", i)
		}
	}
	return "vars._runtime.memory_spans[].tags"
}

// errSpanNotHere aborts a MEMORY_TAG write to an owner that does not hold
// the span (nothing is committed).
var errSpanNotHere = errors.New("span not in this owner")

// MEMORY_TAG: merges (or, with merge=false, replaces) the tags of one span
// of the scope's owner run(s) and stamps tagged_at / tagged_by. The
// artifact itself is not changed. Scope "all" tags the span wherever it is
// found among the run, session and global owners (artifact ids only).
// Works without an artifact store.
func handleMemoryTag(ctx context.Context, req *EffectRequest) (Outcome, error) {
	out, err := memoryTag(ctx, req)
	if err != nil {
		return memOutcome(err)
	}
	return out, nil
}

func memoryTag(ctx context.Context, req *EffectRequest) (Outcome, error) {
	EnsureNamespaces(req.Run.Vars)
	p := req.Effect.Payload
	name := pyStrOr(p["tool_name"], "remember")
	callID := pyStrOr(p["call_id"], "memory")

	base, err := baseRun(ctx, req)
	if err != nil {
		return Outcome{}, err
	}
	scope := normScope(p["scope"])
	switch scope {
	case "run", "session", "global", "all":
	default:
		return Outcome{}, failf("Unknown memory_tag scope: %s", scope)
	}
	rawID, present := p["span_id"]
	if !present || rawID == nil {
		return Outcome{}, failf("MEMORY_TAG requires payload.span_id")
	}
	rawTags, _ := p["tags"].(map[string]any)
	if len(rawTags) == 0 {
		return Outcome{}, failf("MEMORY_TAG requires payload.tags as a non-empty dict[str,str]")
	}
	merge := true
	if v, set := p["merge"]; set {
		merge = truthy(v)
	}
	tags := cleanTags(rawTags)
	if len(tags) == 0 {
		return Outcome{}, failf("MEMORY_TAG requires at least one non-empty string tag")
	}
	ref, ok, err := parseSpanRef(rawID)
	if err != nil {
		return Outcome{}, err
	}
	if !ok {
		if s, isStr := rawID.(string); isStr && pyval.Strip(s) == "" {
			return Outcome{}, failf("MEMORY_TAG requires a non-empty span_id")
		}
		return Outcome{}, failf("MEMORY_TAG requires span_id as str or int")
	}
	if scope == "all" && ref.isIdx {
		return Outcome{}, failf("memory_tag scope='all' requires span_id as artifact id (no indices)")
	}
	owners, err := req.Runtime.memoryOwners(ctx, base, scope)
	if err != nil {
		return Outcome{}, err
	}

	now := memNow(req)
	var applied []any
	for _, o := range owners {
		if skipOnReplay(req, o.id) {
			continue
		}
		// Only an owner that holds the span is written, as Python saves
		// only those: writing takes the owner's lock, which a parent
		// whose tick runs this sync child holds (scope "all" names it as
		// the session owner).
		if held, err := ownerHoldsSpan(ctx, req, o, ref); err != nil {
			return Outcome{}, err
		} else if !held {
			continue
		}
		var entry map[string]any
		err := writeOwner(ctx, req, o, func(run *durable.RunState) error {
			entry = nil
			if err := loadSpanIndex(ctx, req.Runtime.Artifacts(), run); err != nil {
				return err
			}
			span := findSpan(spanList(run), ref.resolve(spanList(run)))
			if span == nil {
				return errSpanNotHere
			}
			merged := map[string]any{}
			if merge {
				// A node's map[string]string is merged too; tags that are
				// not JSON are left in place to fail the run at its commit
				// naming them, which the merged tags would erase.
				old, ok := writableObject(span["tags"])
				if !ok {
					return failf("Cannot merge tags into span %s of run %s: %v", ref, run.RunID,
						pyjson.Check(span["tags"], spanTagsPath(spanList(run), span)))
				}
				for k, v := range old {
					merged[k] = v
				}
			}
			for k, v := range tags {
				merged[k] = v
			}
			span["tags"] = merged
			span["tagged_at"] = now
			if req.Run.ActorID != "" {
				span["tagged_by"] = req.Run.ActorID
			}
			entry = map[string]any{"run_id": run.RunID, "artifact_id": spanArtifactID(span), "tags": pyjson.CloneObject(merged)}
			return nil
		})
		if errors.Is(err, errSpanNotHere) {
			continue
		}
		if err != nil {
			return Outcome{}, err
		}
		applied = append(applied, entry)
	}
	if len(applied) == 0 {
		if ref.isIdx {
			return Outcome{}, failf("Unknown span index: %s", ref)
		}
		return Outcome{}, failf("Unknown span_id: %s", ref.id)
	}
	first := applied[0].(map[string]any)
	rendered, err := pyjson.Marshal(first["tags"], pyjson.Style{SortKeys: true})
	if err != nil {
		return Outcome{}, err
	}
	runs := make([]string, 0, len(applied))
	for _, a := range applied {
		runs = append(runs, a.(map[string]any)["run_id"].(string))
	}
	text := "Tagged span_id=" + first["artifact_id"].(string) + " scope=" + scope +
		" runs=[" + strings.Join(runs, ",") + "] tags=" + string(rendered)
	return Completed(memoryEnvelope(callID, name, true, text, "", map[string]any{"applied": applied})), nil
}

// ownerHoldsSpan reports whether an owner's span index, read without its
// lock, holds the span ref names.
func ownerHoldsSpan(ctx context.Context, req *EffectRequest, o memOwner, ref spanRef) (bool, error) {
	run, err := readOwner(ctx, req, o)
	if err != nil || run == nil {
		return false, err
	}
	if err := loadSpanIndex(ctx, req.Runtime.Artifacts(), run); err != nil {
		return false, err
	}
	spans := spanList(run)
	return findSpan(spans, ref.resolve(spans)) != nil, nil
}
