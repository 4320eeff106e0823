package artifact

import (
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

var codeContentTypes = map[string]bool{
	"application/javascript": true, "application/x-javascript": true,
	"application/typescript": true, "application/x-python-code": true,
	"application/x-sh": true, "application/x-shellscript": true,
	"text/javascript": true, "text/jsx": true, "text/typescript": true, "text/tsx": true,
	"text/x-python": true, "text/x-shellscript": true, "text/x-script.python": true,
	"text/x-go": true, "text/x-rust": true, "text/x-java-source": true, "text/x-c": true,
	"text/x-c++": true, "text/x-csharp": true, "text/x-php": true, "text/x-ruby": true,
}

// RenderKind maps a content type to the descriptor's render kind: image,
// audio, video, code, json, markdown, html, text, document or binary.
func RenderKind(contentType string) string {
	ct := lowerTrim(contentType)
	switch {
	case strings.HasPrefix(ct, "image/"):
		return "image"
	case strings.HasPrefix(ct, "audio/"):
		return "audio"
	case strings.HasPrefix(ct, "video/"):
		return "video"
	case codeContentTypes[ct]:
		return "code"
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		return "json"
	case ct == "text/markdown" || ct == "text/x-markdown":
		return "markdown"
	case strings.Contains(ct, "html"):
		return "html"
	case strings.HasPrefix(ct, "text/"):
		return "text"
	case strings.Contains(ct, "pdf") || strings.Contains(ct, "document"):
		return "document"
	}
	return "binary"
}

func in(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// semanticKindFromTags is Python _semantic_kind_from_tags.
func semanticKindFromTags(contentType string, tags map[string]string, renderKind string) string {
	if explicit := pyval.Strip(cmpOr(tags["semantic_kind"], tags["artifact_type"])); explicit != "" {
		return pyval.Lower(explicit)
	}
	modality := lowerTrim(tags["modality"])
	task := lowerTrim(cmpOr(tags["task"], tags["provider_task"]))
	kind := lowerTrim(tags["kind"])
	switch {
	case in(modality, "voice", "music", "sound", "image", "video", "text", "document", "code"):
		return modality
	case in(task, "code", "coding", "code_generation", "script", "program"),
		in(kind, "code", "source_code", "script", "program", "executable"):
		return "code"
	case in(task, "tts", "speech", "speech_generation"):
		return "voice"
	case in(task, "music", "music_generation", "text_to_music"):
		return "music"
	case in(task, "stt", "transcription", "speech_to_text"):
		return "transcript"
	case in(kind, "attachment", "evidence", "workflow_snapshot", "conversation_span", "memory_note"):
		return kind
	case in(renderKind, "image", "video", "audio", "document", "json", "html", "markdown", "code", "text"):
		return renderKind
	}
	return RenderKind(contentType)
}

// normalizeDescriptor is Python _normalize_descriptor. declared says the
// producer passed a descriptor (classification "runtime_declared"); media
// holds inspected facts, which the descriptor's own media members
// override.
func normalizeDescriptor(d Descriptor, declared bool, contentType, runID string, tags map[string]string, media map[string]any) Descriptor {
	d.RenderKind = cmpOr(d.RenderKind, RenderKind(contentType))
	d.SemanticKind = cmpOr(d.SemanticKind, semanticKindFromTags(contentType, tags, d.RenderKind))
	if d.Modality == "" {
		d.Modality = lowerTrim(tags["modality"])
	}
	if d.Modality == "" {
		if in(d.SemanticKind, "voice", "music", "sound") {
			d.Modality = d.SemanticKind
		} else {
			d.Modality = d.RenderKind
		}
	}
	d.Task = cmpOr(d.Task, lowerTrim(cmpOr(tags["task"], tags["provider_task"])))
	if d.ClassificationSource == "" {
		switch {
		case declared:
			d.ClassificationSource = "runtime_declared"
		case tags["semantic_kind"] != "" || tags["artifact_type"] != "" || tags["modality"] != "" || tags["task"] != "":
			d.ClassificationSource = "runtime_tags"
		default:
			d.ClassificationSource = "runtime_mime_inferred"
		}
	}
	tag := func(keys ...string) string {
		for _, k := range keys {
			if v := tags[k]; v != "" {
				return pyval.Strip(v) // Python _str_or_none: str.strip()
			}
		}
		return ""
	}
	d.SessionID = cmpOr(d.SessionID, tag("session_id"))
	d.WorkflowID = cmpOr(d.WorkflowID, tag("workflow_id", "workflow"))
	d.NodeID = cmpOr(d.NodeID, tag("node_id", "node"))
	d.StepID = cmpOr(d.StepID, tag("step_id"))
	d.EffectID = cmpOr(d.EffectID, tag("effect_id", "effect_idempotency_key"))
	d.TurnID = cmpOr(d.TurnID, tag("turn_id", "turn"))
	d.LedgerCursor = cmpOr(d.LedgerCursor, tag("ledger_cursor", "step_cursor"))
	d.ParentRunID = cmpOr(d.ParentRunID, tag("parent_run_id"))
	d.ActorID = cmpOr(d.ActorID, tag("actor_id"))
	if d.Provenance == nil {
		d.Provenance = map[string]any{}
	}
	if _, ok := d.Provenance["run_id"]; runID != "" && !ok {
		d.Provenance["run_id"] = runID
	}
	if _, ok := d.Provenance["source"]; tags["source"] != "" && !ok {
		d.Provenance["source"] = tags["source"]
	}
	if len(media) > 0 {
		merged := pyjson.CloneObject(media)
		for k, v := range d.Media {
			if v != nil {
				merged[k] = v
			}
		}
		d.Media = merged
	}
	return d
}

var descriptorObjectKeys = map[string]bool{
	"producer": true, "provenance": true, "generation": true, "media": true,
	"links": true, "security": true, "actions": true,
}

// mergeDescriptor is Python _merge_descriptor_payload: incoming members
// enrich base without erasing it (object members are merged, empty values
// ignored).
func mergeDescriptor(base map[string]any, incoming map[string]any) map[string]any {
	merged := pyjson.CloneObject(base)
	for _, kv := range descriptorFromJSON(incoming).JSONValue() {
		key, value := kv.Key, kv.Value
		switch {
		case key == "schema" || key == "schema_version":
			merged[key] = value
		case descriptorObjectKeys[key]:
			if m, ok := value.(map[string]any); ok && len(m) > 0 {
				prev := objectOrEmpty(merged[key])
				for k, v := range m {
					prev[k] = v
				}
				merged[key] = prev
			}
		case key == "source_refs":
			if l, ok := value.([]any); ok && len(l) > 0 {
				merged[key] = l
			}
		case truthy(value):
			merged[key] = value
		}
	}
	return merged
}
