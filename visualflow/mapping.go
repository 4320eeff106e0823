package visualflow

import (
	"maps"
	"regexp"
	"slices"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// mapEffect maps the stored outcome of an effect node onto its output
// pins (§5.3), merged over the node's persisted record.
func (s *step) mapEffect(n *node, raw any, prior any) any {
	out := map[string]any{}
	if m, ok := prior.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	delete(out, "_pending_effect")
	rm, isObj := raw.(map[string]any)
	merge := func() {
		for k, v := range rm {
			out[k] = v
		}
	}
	switch n.Type {
	case "ask_user", "answer_user", "emit_event":
		if isObj {
			merge()
		}
	case "wait_until":
		if isObj {
			merge()
		} else {
			out["result"] = raw
		}
	case "wait_event":
		out["event_data"] = raw
	case "listen_voice":
		if !isObj {
			out["event_data"] = raw
			break
		}
		merge()
		// Python's `a or b or c`, then only an object replaces the merged
		// values: a host resuming with an artifact id text keeps that text.
		if ref, ok := pyval.GetOr(rm, "audio_artifact", "artifact", "artifact_ref").(map[string]any); ok {
			out["audio_artifact"], out["artifact_ref"] = ref, ref
			if id := pyStripped(pyval.GetOr(ref, "$artifact", "artifact_id")); id != "" {
				out["artifact_id"] = id
			}
		}
	case "llm_call":
		mapLLM(out, rm, n.referenced)
	case "generate_image", "edit_image", "image_to_image", "upscale_image", "image_upscale":
		mapMedia(out, raw, n.Type, "image", "image_artifact")
	case "generate_video", "text_to_video", "image_to_video":
		mapMedia(out, raw, n.Type, "video", "video_artifact")
	case "generate_voice":
		mapMedia(out, raw, n.Type, "voice", "audio_artifact")
	case "generate_music":
		mapMedia(out, raw, n.Type, "music", "music_artifact")
	case "transcribe_audio":
		// The reference's placeholder record, written afresh before each
		// run: it has no artifact_id/artifact_ref, so those pins stay
		// absent unless the outcome names an artifact.
		out["text"], out["transcript_artifact"], out["success"] = "", nil, nil
		if !isObj {
			break
		}
		// Always a string: str(text.content), else str(content), else "".
		text := ""
		if tm, ok := rm["text"].(map[string]any); ok && tm["content"] != nil {
			text = pyval.Str(tm["content"])
		}
		if text == "" && rm["content"] != nil {
			text = pyval.Str(rm["content"])
		}
		out["text"] = text
		if ref := firstArtifact(rm); ref != nil {
			out["transcript_artifact"], out["artifact_ref"] = ref, ref
			out["artifact_id"] = artifactID(ref)
		}
		out["success"] = true
		out["meta"] = map[string]any{"schema": "abstractflow.transcribe_audio.v1.meta", "version": int64(1), "modality": "text", "task": "transcription"}
		out["raw"] = raw
	case "model_residency":
		mapResidency(out, raw, n.referenced)
	case "tool_calls":
		results, _ := rm["results"].([]any)
		if results == nil {
			results = []any{}
		}
		out["results"] = results
		ok := true
		// mode.strip() and mode != "executed": a blank mode is no mode.
		if mode, _ := rm["mode"].(string); pyval.Strip(mode) != "" && mode != "executed" {
			ok = false
		} else {
			for _, r := range results {
				if rr, _ := r.(map[string]any); rr["success"] != true {
					ok = false
				}
			}
		}
		out["success"], out["raw"] = ok, raw
	case "call_tool":
		mapCallTool(out, rm)
		out["raw"] = raw
	case "on_event":
		out["event"] = raw
		out["payload"], out["event_id"], out["name"] = rm["payload"], rm["event_id"], rm["name"]
	case "on_schedule":
		if isObj {
			merge()
		}
		out["timestamp"] = firstNonNull(rm, "timestamp", "scheduled_for")
		// Set after the merge: the reference overwrites whatever the
		// outcome carried with the flag it derives from the config.
		out["recurrent"] = scheduleRecurrentPin(eventConfig(n))
	case "subflow":
		return s.mapSubflow(n, out, raw)
	default:
		mapMemory(out, n.Type, raw, rm)
	}
	return out
}

// artifactID returns the id of an artifact ref.
func artifactID(ref any) any {
	m, _ := ref.(map[string]any)
	if m == nil {
		return ""
	}
	return orDefault(firstNonNull(m, "artifact_id", "$artifact", "id"), "")
}

// firstArtifact finds the first generated artifact of a media outcome:
// raw.artifact_ref, else raw.artifact_id, else the first item of the
// outputs/resources lists that names one. It returns nil or a ref object.
func firstArtifact(raw map[string]any) any {
	if ref := itemArtifact(map[string]any{"artifact_ref": raw["artifact_ref"]}); ref != nil {
		return ref
	}
	if id := pyStripped(raw["artifact_id"]); id != "" {
		return map[string]any{"$artifact": id, "artifact_id": id}
	}
	for _, key := range []string{"outputs", "resources"} {
		group, _ := raw[key].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(group)) {
			list, _ := group[k].([]any)
			for _, item := range list {
				im, _ := item.(map[string]any)
				if ref := itemArtifact(im); ref != nil {
					return ref
				}
			}
		}
	}
	return nil
}

// itemArtifact is the ref a generated item names, as Python's
// _artifact_ref_from_generated_item reads it: its artifact_ref object when
// that holds an id (under $artifact, artifact_id or id), copied with
// $artifact and artifact_id set to the trimmed id, so consumers that look
// only at those keys find it; else a ref built from the item's own
// $artifact/artifact_id. Ids are non-blank strings; nil when none.
func itemArtifact(item map[string]any) map[string]any {
	if ref, ok := item["artifact_ref"].(map[string]any); ok {
		if id := pyStripped(pyval.GetOr(ref, "$artifact", "artifact_id", "id")); id != "" {
			out := copyObject(ref)
			out["$artifact"], out["artifact_id"] = id, id
			return out
		}
	}
	id := pyStripped(pyval.GetOr(item, "$artifact", "artifact_id"))
	if id == "" {
		return nil
	}
	ref := map[string]any{"$artifact": id, "artifact_id": id}
	if ct := pyStripped(item["content_type"]); ct != "" {
		ref["content_type"] = ct
	}
	if sb := item["size_bytes"]; sb != nil && !isBool(sb) {
		ref["size_bytes"] = sb
	}
	return ref
}

func hasMediaList(v any) bool {
	m, _ := v.(map[string]any)
	for _, x := range m {
		if l, ok := x.([]any); ok && len(l) > 0 {
			return true
		}
	}
	return false
}

func mapLLM(out, raw map[string]any, referenced map[string]bool) {
	data := raw["data"]
	switch data.(type) {
	case map[string]any, []any:
		text, _ := pyval.Dumps(data, pyval.Compact)
		out["response"] = text
		out["data"] = data
	default:
		if c := raw["content"]; c != nil {
			out["response"] = pyval.Str(c)
		} else {
			out["response"] = ""
		}
	}
	// _as_dict_list: a single tool-call object is a one-item list.
	calls := objectList(raw["tool_calls"])
	if calls == nil {
		calls = []any{}
	}
	out["tool_calls"], out["success"] = calls, true
	for _, k := range []string{"outputs", "resources"} {
		if m, ok := raw[k].(map[string]any); ok {
			out[k] = m
		}
	}
	if ref := firstArtifact(raw); ref != nil {
		out["artifact_ref"], out["artifact_id"] = ref, artifactID(ref)
	}
	mode := "unstructured"
	if hasMediaList(raw["outputs"]) || hasMediaList(raw["resources"]) {
		mode = "media"
	} else if _, ok := out["data"]; ok {
		mode = "structured"
	}
	meta := map[string]any{"schema": "abstractflow.llm_call.v1.meta", "version": int64(1), "output_mode": mode, "tool_calls": int64(len(calls))}
	// As Python fills it: texts only when non-blank (trimmed), usage only
	// as an object, timings unless null or a boolean.
	for _, k := range []string{"provider", "model", "finish_reason"} {
		if v := pyStripped(raw[k]); v != "" {
			meta[k] = v
		}
	}
	if u, ok := raw["usage"].(map[string]any); ok {
		meta["usage"] = copyObject(u)
	}
	tid := pyStripped(raw["trace_id"])
	if tid == "" {
		md, _ := raw["metadata"].(map[string]any)
		tid = pyStripped(md["trace_id"])
	}
	if tid != "" {
		meta["trace"] = map[string]any{"trace_id": tid}
	}
	for _, k := range []string{"gen_time", "ttft_ms"} {
		if v := raw[k]; v != nil && !isBool(v) {
			meta[k] = v
		}
	}
	out["meta"] = meta
	if referenced["result"] {
		out["result"] = raw
	}
	if referenced["raw"] {
		out["raw"] = raw
	}
	for _, k := range []string{"gen_time", "ttft_ms"} {
		if referenced[k] {
			out[k] = raw[k]
		}
	}
}

// mapMedia maps a media generation outcome. The reference's media
// handlers replace the node's record before each run with placeholders
// ({<primary>: None, artifact_ref: None, artifact_id: "", success: None},
// music with audio_artifact too), and the mapping then sets the artifact
// pins only from an artifact the outcome names: a run that produces none
// shows the placeholders, never a previous run's artifact.
func mapMedia(out map[string]any, raw any, nodeType, modality, primary string) {
	out[primary], out["artifact_ref"], out["artifact_id"], out["success"] = nil, nil, "", nil
	if nodeType == "generate_music" {
		out["audio_artifact"] = nil
	}
	rm, ok := raw.(map[string]any)
	if !ok {
		return // the reference maps only an object outcome
	}
	outputs, ok := rm["outputs"].(map[string]any)
	if !ok {
		outputs = map[string]any{}
	}
	out["outputs"] = outputs
	if r, ok := rm["resources"].(map[string]any); ok {
		out["resources"] = r
	}
	ref := firstArtifact(rm)
	if ref != nil {
		out["artifact_ref"], out[primary] = ref, ref
		if nodeType == "generate_music" {
			out["audio_artifact"] = ref
		}
		// Only a content type the ref states replaces the pin's value.
		if ct := pyStripped(ref.(map[string]any)["content_type"]); ct != "" {
			out["content_type"] = ct
		}
		out["artifact_id"] = artifactID(ref)
	}
	out["success"] = ref != nil
	meta := map[string]any{"schema": "abstractflow." + nodeType + ".v1.meta", "version": int64(1), "modality": modality}
	for _, k := range []string{"provider", "model"} {
		if v := rm[k]; v != nil {
			meta[k] = v
		}
	}
	out["meta"], out["raw"] = meta, raw
}

func mapResidency(out map[string]any, raw any, referenced map[string]bool) {
	rm, ok := raw.(map[string]any)
	if !ok {
		// str(raw) as the error, and as the one warning unless raw is null.
		warnings := []any{}
		if raw != nil {
			warnings = []any{pyval.Str(raw)}
		}
		out["success"], out["error"] = false, pyval.Str(raw)
		out["affected_models"], out["models"], out["warnings"], out["result"] = []any{}, []any{}, warnings, raw
		return
	}
	switch {
	case isBool(rm["success"]):
		out["success"] = rm["success"]
	case isBool(rm["ok"]):
		out["success"] = rm["ok"]
	default:
		out["success"] = !pyval.Truthy(rm["error"])
	}
	var affected []any
	if l, ok := rm["affected_models"].([]any); ok {
		affected = l
	} else if rt, ok := rm["runtime"].(map[string]any); ok {
		affected = []any{rt}
	} else if l, ok := rm["models"].([]any); ok {
		affected = l
	} else {
		affected = []any{}
	}
	out["affected_models"] = affected
	if l, ok := rm["models"].([]any); ok {
		out["models"] = l
	} else {
		out["models"] = affected
	}
	out["error"] = ""
	if pyval.Truthy(rm["error"]) {
		out["error"] = pyval.Str(rm["error"])
	}
	if w, ok := rm["warnings"].([]any); ok {
		out["warnings"] = w
	} else {
		out["warnings"] = []any{}
	}
	out["result"] = raw
	if _, ok := rm["runtime"].(map[string]any); ok && referenced["runtime"] {
		out["runtime"] = rm["runtime"]
	}
	for _, k := range []string{"loaded_new", "unloaded"} {
		if referenced[k] {
			out[k] = rm[k]
		}
	}
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

func mapCallTool(out, raw map[string]any) {
	mode, _ := raw["mode"].(string)
	results, _ := raw["results"].([]any)
	switch {
	case pyval.Strip(mode) != "" && mode != "executed":
		out["success"], out["result"] = false, "Tool execution not completed (mode="+mode+")"
	case len(results) == 0:
		out["success"], out["result"] = false, "Missing tool result"
	default:
		r, ok := results[0].(map[string]any)
		switch {
		case !ok:
			out["success"], out["result"] = false, "Missing tool result"
		case r["success"] == true:
			out["success"], out["result"] = true, r["output"]
		default:
			// Python's `error or "..."`: an empty error text gets the default too.
			msg := r["error"]
			if !pyval.Truthy(msg) {
				msg = "Tool execution failed"
			}
			out["success"], out["result"] = false, msg
		}
	}
}

// firstResult returns raw.results[0] as an object.
func firstResult(raw map[string]any) map[string]any {
	list, _ := raw["results"].([]any)
	if len(list) == 0 {
		return nil
	}
	m, _ := list[0].(map[string]any)
	return m
}

func mapMemory(out map[string]any, t string, raw any, rm map[string]any) {
	out["raw"] = raw
	r0 := firstResult(rm)
	meta, _ := r0["meta"].(map[string]any)
	listOr := func(v any) any {
		if l, ok := v.([]any); ok {
			return l
		}
		return []any{}
	}
	// Python's _get_span_id: a non-blank text, trimmed, else None.
	spanID := func() any {
		if s, ok := meta["span_id"].(string); ok {
			if s = pyval.Strip(s); s != "" {
				return s
			}
		}
		return nil
	}
	// rendered is the first result's output only when it is a text.
	rendered := func() string {
		s, _ := r0["output"].(string)
		return s
	}
	// An object outcome's count/ok (and rehydrate's counters) are
	// raw.get(...), null when missing; only a non-object outcome gets the
	// zero values.
	_, isObj := raw.(map[string]any)
	switch t {
	case "memory_note":
		out["note_id"] = spanID()
	case "memory_compact":
		out["span_id"] = spanID()
	case "memory_query":
		out["rendered"] = rendered()
		out["results"] = listOr(meta["matches"])
		out["span_ids"] = listOr(meta["span_ids"])
	case "memory_tag":
		out["rendered"] = rendered()
		out["success"] = r0["success"] == true
		out["results"] = listOr(rm["results"])
	case "memory_rehydrate":
		if isObj {
			out["inserted"], out["skipped"], out["artifacts"] = rm["inserted"], rm["skipped"], rm["artifacts"]
		} else {
			out["inserted"], out["skipped"], out["artifacts"] = int64(0), int64(0), []any{}
		}
	case "memory_kg_assert":
		out["assertion_ids"] = listOr(rm["assertion_ids"])
		countOK(out, rm, isObj)
	case "memory_kg_query":
		out["items"] = listOr(rm["items"])
		countOK(out, rm, isObj)
		if !isObj {
			out["packets"], out["packed_count"], out["active_memory_text"] = []any{}, int64(0), ""
			out["estimated_tokens"], out["dropped"] = int64(0), int64(0)
			break
		}
		for _, k := range []string{"packets_version", "packets", "packed_count", "active_memory_text", "estimated_tokens", "dropped", "warnings"} {
			if v, ok := rm[k]; ok {
				out[k] = v
			}
		}
	case "memory_kg_resolve":
		out["candidates"] = listOr(rm["candidates"])
		countOK(out, rm, isObj)
		if v, ok := rm["warnings"]; ok {
			out["warnings"] = v
		}
	}
}

// countOK sets the KG nodes' count and ok pins: raw.get(...) for an object
// outcome (null when missing), 0 and false otherwise.
func countOK(out, rm map[string]any, isObj bool) {
	if isObj {
		out["count"], out["ok"] = rm["count"], rm["ok"]
		return
	}
	out["count"], out["ok"] = int64(0), false
}

// mainPin is the pin an effect node's main value is read from, for the
// node types whose main value is one pin (mappedValue has the others).
var mainPin = map[string]string{
	"ask_user": "response", "llm_call": "response",
	"tool_calls": "results", "memory_query": "results", "call_tool": "result",
	"subflow": "output", "wait_event": "event_data",
	"memory_note": "note_id", "memory_compact": "span_id", "memory_tag": "rendered",
	"memory_kg_assert": "assertion_ids", "memory_kg_query": "items", "memory_kg_resolve": "candidates",
}

// mappedValue is the main value of an effect node, written at outputKey
// (§5.3): one pin, or the raw outcome, per node type, as Python's
// _sync_effect_results_to_node_outputs picks it. nil writes nothing.
func mappedValue(n *node, mapped, raw any) any {
	m, _ := mapped.(map[string]any)
	if pin, ok := mainPin[n.Type]; ok {
		return m[pin]
	}
	switch n.Type {
	case "answer_user":
		if rm, ok := raw.(map[string]any); ok {
			return rm["message"]
		}
		return raw
	case "generate_image", "edit_image", "image_to_image", "upscale_image", "image_upscale",
		"generate_video", "text_to_video", "image_to_video", "generate_voice", "generate_music":
		// Python's `artifact_ref or artifact_id`, None when the outcome
		// names no artifact (mapMedia's "" id is not a value to write).
		if v := pyval.GetOr(m, "artifact_ref", "artifact_id"); pyval.Truthy(v) {
			return v
		}
		return nil
	case "transcribe_audio":
		// The text, when the outcome is an object the mapping read.
		if _, ok := raw.(map[string]any); ok {
			return m["text"]
		}
		return nil
	case "listen_voice":
		if a := m["audio_artifact"]; pyval.Truthy(a) {
			return a
		}
		return raw
	case "on_schedule":
		if ts := m["timestamp"]; ts != nil {
			return ts
		}
		return raw
	case "agent", "wait_until", "emit_event", "on_event", "model_residency", "memory_rehydrate":
		return raw
	}
	return nil
}

// brokenIntervalRE is the reference's interval pattern as it is written,
// with doubled backslashes in a raw string: it matches a literal backslash
// where a digit or space class was meant, so no real interval matches it.
var brokenIntervalRE = regexp.MustCompile(`(?i)^\\s*\\d+(?:\\.\\d+)?\\s*(ms|s|m|h|d)\\s*$`)

// scheduleRecurrentPin is on_schedule's `recurrent` output as the
// reference computes it from eventConfig alone (§5.3, quirk Q4): true
// unless config recurrent is set and falsy, and false whenever a
// non-numeric, non-blank config schedule fails the broken interval
// pattern, i.e. for every string schedule. A schedule given on the pin
// (or the "15s" default) does not enter into it.
func scheduleRecurrentPin(cfg map[string]any) bool {
	recurrent := true
	if v := cfg["recurrent"]; v != nil {
		recurrent = pyval.Truthy(v)
	}
	if sc := cfg["schedule"]; sc != nil && !pyval.IsNumber(sc) {
		if spec := pyval.Strip(pyval.StrOrEmpty(sc)); spec != "" && !brokenIntervalRE.MatchString(spec) {
			recurrent = false
		}
	}
	return recurrent
}
