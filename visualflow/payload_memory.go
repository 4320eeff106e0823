package visualflow

import (
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// memoryPayload builds the payloads of the memory and KG nodes (§6.8).
func memoryPayload(t string, in, cfg map[string]any) map[string]any {
	p := map[string]any{}
	setTrimmed := func(key string, v any) {
		if s := trimmed(v); s != "" {
			p[key] = s
		}
	}
	switch t {
	case "memory_note":
		// The note goes through as given (the reference's
		// input_data.get("content", "")): the runtime's str(note or "")
		// decides what counts as empty, so 0 or false is no note.
		p["note"] = getOr(in, "content", "")
		if tags, ok := in["tags"].(map[string]any); ok {
			p["tags"] = tags
		} else {
			p["tags"] = map[string]any{}
		}
		if src, ok := in["sources"].(map[string]any); ok {
			p["sources"] = src
		}
		setTrimmed("location", in["location"])
		setTrimmed("scope", in["scope"])
		// A present pin decides even when null; the config falls back
		// past a null keep_in_context (config.get(...) is None checks).
		keepV, ok := first(in, "keep_in_context", "keepInContext")
		if !ok {
			keepV = firstNonNull(cfg, "keep_in_context", "keepInContext")
		}
		keep := pyval.CoerceBool(keepV)
		if keep {
			p["keep_in_context"] = true
		}
	case "memory_query":
		// input_data.get("query", ""): a present null is sent as null.
		p["query"] = getOr(in, "query", "")
		// Python int(limit): bools count, "2.5" fails; any failure is 10.
		limit := int64(10)
		if v := in["limit"]; v != nil {
			if i, err := pyval.ToInt(v); err == nil {
				limit = i
			}
		}
		p["limit_spans"], p["return"] = limit, "both"
		setTrimmed("recall_level", in["recall_level"])
		if tags, ok := in["tags"].(map[string]any); ok {
			p["tags"] = tags
		}
		setTrimmed("tags_mode", in["tags_mode"])
		for _, k := range []string{"usernames", "locations"} {
			if list, ok := in[k].([]any); ok {
				p[k] = cleanStrings(list)
			}
		}
		for _, k := range []string{"since", "until"} {
			if v := in[k]; v != nil {
				p[k] = v
			}
		}
		setTrimmed("scope", in["scope"])
	case "memory_tag":
		p["span_id"] = firstNonNull(in, "span_id", "spanId")
		if tags, ok := in["tags"].(map[string]any); ok {
			p["tags"] = tags
		} else {
			p["tags"] = map[string]any{}
		}
		if v, ok := in["merge"]; ok {
			p["merge"] = pyval.CoerceBool(v)
		}
		// str(scope).strip() or None: a blank scope is not sent.
		if s, ok := in["scope"].(string); ok {
			if t := pyval.Strip(s); t != "" {
				p["scope"] = t
			}
		}
	case "memory_compact":
		if v := in["preserve_recent"]; v != nil {
			p["preserve_recent"] = v
		}
		setTrimmed("compression_mode", in["compression_mode"])
		setTrimmed("focus", in["focus"])
	case "memory_rehydrate":
		ids := firstNonNull(in, "span_ids", "span_id")
		switch x := ids.(type) {
		case []any:
			p["span_ids"] = x
		case nil:
			p["span_ids"] = []any{}
		default:
			p["span_ids"] = []any{x}
		}
		placement := trimmed(in["placement"])
		if placement != "after_system" && placement != "end" {
			placement = "after_summary"
		}
		p["placement"] = placement
		if v := in["max_messages"]; v != nil {
			p["max_messages"] = v
		}
		setTrimmed("recall_level", in["recall_level"])
	case "memory_kg_assert":
		var list []any
		switch x := firstNonNull(in, "assertions", "triples", "items").(type) {
		case []any:
			for _, a := range x {
				if m, ok := a.(map[string]any); ok {
					list = append(list, m)
				}
			}
		case map[string]any:
			list = []any{x}
		}
		if list == nil {
			list = []any{}
		}
		p["assertions"] = list
		setTrimmed("scope", in["scope"])
		setTrimmed("owner_id", in["owner_id"])
		setTrimmed("span_id", in["span_id"])
		if m, ok := in["attributes_defaults"].(map[string]any); ok && len(m) > 0 {
			p["attributes_defaults"] = m
		}
		if b, ok := in["allow_custom_predicates"].(bool); ok {
			p["allow_custom_predicates"] = b
		}
	case "memory_kg_query":
		for _, k := range []string{"subject", "predicate", "object", "recall_level", "scope", "owner_id", "since", "until", "active_at", "query_text", "order", "model"} {
			setTrimmed(k, in[k])
		}
		if i, ok := intOK(firstNonNull(in, "max_input_tokens", "max_in_tokens")); ok {
			p["max_input_tokens"] = i
		}
		if f, ok := floatOK(in["min_score"]); ok {
			p["min_score"] = f
		}
		// limit is int(limit), unlike the two int(float()) settings above.
		if i, ok := strictIntOK(in["limit"]); ok {
			p["limit"] = i
		}
	case "memory_kg_resolve":
		for _, k := range []string{"label", "expected_type", "recall_level", "scope", "owner_id"} {
			setTrimmed(k, in[k])
		}
		if b, ok := firstNonNull(in, "include_semantic", "includeSemantic").(bool); ok {
			p["include_semantic"] = b
		}
		if f, ok := floatOK(firstNonNull(in, "min_score", "minScore")); ok {
			p["min_score"] = f
		}
		if i, ok := intOK(firstNonNull(in, "max_candidates", "maxCandidates", "limit")); ok {
			p["max_candidates"] = i
		}
	}
	return p
}
