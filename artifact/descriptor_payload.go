package artifact

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

const (
	// MetadataSchema is the default schema of the metadata
	// BuildDescriptorPayload returns.
	MetadataSchema = "abstractruntime.artifact_metadata.v1"
	// SecurityRedaction names the redaction SafeMetadataValue applies; it is
	// recorded in the descriptor's security member.
	SecurityRedaction = "bounded_secret_key_redaction_v1"
)

// Bounds SafeMetadataValue applies (spec §4.8).
const (
	maxMetadataDepth   = 6
	maxMetadataString  = 12000
	maxMetadataItems   = 120
	maxMetadataKeys    = 160
	maxInlineMediaText = 2048
)

var secretKeys = map[string]bool{
	"access_token": true, "api_token": true, "auth_token": true, "bearer_token": true,
	"bot_token": true, "client_secret": true, "csrf_token": true, "id_token": true,
	"password": true, "refresh_token": true, "secret": true, "session_token": true, "token": true,
}

var secretKeyFragments = []string{"api_key", "api-key", "apikey", "authorization", "private_key"}

var secretKeyWords = map[string]bool{"password": true, "secret": true, "token": true}

// inlineMediaKeys name members that carry media inline (base64 and the
// like): a long string under one is replaced by its length.
var inlineMediaKeys = map[string]bool{
	"data": true, "b64_json": true, "image": true, "video": true, "audio": true, "content": true,
}

// DescriptorInput is what the producer of a generated artifact (an image,
// a voice clip, a transcript) knows about it. Empty strings and nil maps
// mean "not known".
type DescriptorInput struct {
	SemanticKind         string
	RenderKind           string // "" means inferred from ContentType
	Modality             string // "" means inferred from the kinds
	Task                 string
	ClassificationSource string // "" means "producer"
	ContentType          string

	SessionID    string
	WorkflowID   string
	NodeID       string
	StepID       string
	EffectID     string
	TurnID       string
	LedgerCursor string
	ParentRunID  string
	ActorID      string

	// RunID, RequestID and Source go to the descriptor's provenance.
	RunID     string
	RequestID string
	Source    string

	Producer   map[string]any
	Generation map[string]any // the request: prompt, model, parameters
	SourceRefs []any
	Media      map[string]any

	MetadataSchema string // "" means MetadataSchema
}

// BuildDescriptorPayload returns the descriptor and the metadata a
// producer stores a generated artifact with (PutParams.Descriptor and
// PutParams.Metadata), as Python's build_artifact_descriptor_payload does:
// kinds trimmed and lower-cased, empty ids null, and the producer,
// generation, source refs and media members passed through
// SafeMetadataValue, so that credentials and inline media never reach the
// artifact index. The security member records the redaction and, when the
// generation holds a prompt, text, input or negative prompt, that the
// descriptor carries user content. The two maps share no values.
func BuildDescriptorPayload(req DescriptorInput) (descriptor, metadata map[string]any) {
	semantic := lowerTrim(req.SemanticKind)
	render := lowerTrim(req.RenderKind)
	if render == "" {
		render = RenderKind(req.ContentType)
	}
	modality := lowerTrim(req.Modality)
	if modality == "" {
		if in(semantic, "voice", "music", "sound") {
			modality = semantic
		} else {
			modality = render
		}
	}
	generation := safeObject(req.Generation)
	producer := safeObject(req.Producer)
	media := safeObject(req.Media)
	refs, _ := SafeMetadataValue(nonNilList(req.SourceRefs)).([]any)
	if refs == nil {
		refs = []any{}
	}

	provenance := map[string]any{}
	for key, value := range map[string]string{"source": req.Source, "run_id": req.RunID, "request_id": req.RequestID} {
		if value != "" {
			provenance[key] = value
		}
	}
	classification := pyval.Strip(cmpOr(req.ClassificationSource, "producer"))
	if classification == "" {
		classification = "producer"
	}

	descriptor = map[string]any{
		"schema":                DescriptorSchema,
		"schema_version":        DescriptorSchemaVersion,
		"semantic_kind":         semantic,
		"render_kind":           render,
		"modality":              modality,
		"task":                  lowerTrim(req.Task),
		"classification_source": classification,
		"session_id":            strOrNull(req.SessionID),
		"workflow_id":           strOrNull(req.WorkflowID),
		"node_id":               strOrNull(req.NodeID),
		"step_id":               strOrNull(req.StepID),
		"effect_id":             strOrNull(req.EffectID),
		"turn_id":               strOrNull(req.TurnID),
		"ledger_cursor":         strOrNull(req.LedgerCursor),
		"parent_run_id":         strOrNull(req.ParentRunID),
		"actor_id":              strOrNull(req.ActorID),
		"producer":              producer,
		"provenance":            provenance,
		"generation":            generation,
		"media":                 media,
		"source_refs":           refs,
		"security":              generationSecurity(generation),
	}
	metadata = map[string]any{
		"schema":      cmpOr(req.MetadataSchema, MetadataSchema),
		"producer":    pyjson.CloneObject(producer),
		"generation":  pyjson.CloneObject(generation),
		"source_refs": pyjson.Clone(refs),
		"security":    generationSecurity(generation),
	}
	return descriptor, metadata
}

// strOrNull is Python's _str_or_none: the trimmed text, or null when blank.
func strOrNull(s string) any {
	if s = pyval.Strip(s); s != "" {
		return s
	}
	return nil
}

func safeObject(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	out, _ := SafeMetadataValue(m).(map[string]any)
	return out
}

// generationSecurity is the descriptor's security member: the redaction
// applied and, when the generation records user text, which fields hold it.
func generationSecurity(generation map[string]any) map[string]any {
	security := map[string]any{"redaction": SecurityRedaction}
	var fields []any
	for _, key := range []string{"prompt", "text", "input", "negative_prompt"} {
		if v := generation[key]; pyval.Truthy(v) && pyval.Strip(pyval.Str(v)) != "" {
			fields = append(fields, key)
		}
	}
	if len(fields) > 0 {
		security["sensitivity"] = "user_content"
		security["recorded_user_content_fields"] = fields
		security["prompt_storage"] = "descriptor_generation_bounded"
	}
	return security
}

// SafeMetadataValue returns a copy of v fit for an artifact descriptor, as
// Python's _artifact_safe_metadata_value makes it:
//   - a member whose key names a credential (token, password, secret,
//     client_secret, api_key, authorization, private_key, …) becomes
//     "[redacted]" unless it is null or "";
//   - a string over 2,048 characters under data, b64_json, image, video,
//     audio or content becomes {"chars": n, "redacted": true}, and bytes
//     {"bytes": n, "redacted": true};
//   - strings are cut at 12,000 characters (then "#TRUNCATION" is added),
//     lists at 120 items (then {"truncated_items": n}), objects at 160
//     members (then "truncated_keys": n), nesting below depth 6;
//   - functions are dropped and other non-JSON values become their text.
//
// A map's members are taken in key order, a pyjson.Ordered's in its own
// order; either becomes a map[string]any.
func SafeMetadataValue(v any) any { return safeMetadataValue(v, 0) }

func safeMetadataValue(v any, depth int) any {
	if depth > maxMetadataDepth {
		return "#TRUNCATION: metadata depth limit"
	}
	switch x := v.(type) {
	case nil, bool:
		return x
	case string:
		if pyval.Len(x) > maxMetadataString {
			end := int64(maxMetadataString)
			return pyval.Slice(x, 0, &end) + "#TRUNCATION"
		}
		return x
	case []byte:
		return map[string]any{"bytes": len(x), "redacted": true}
	case []any:
		return safeList(len(x), func(i int) any { return x[i] }, depth)
	case map[string]any:
		keys := pyjson.SortedKeys(x)
		return safeMembers(len(keys), func(i int) (string, any) { return keys[i], x[keys[i]] }, depth)
	case pyjson.Ordered:
		return safeMembers(len(x), func(i int) (string, any) { return x[i].Key, x[i].Value }, depth)
	}
	if pyval.IsNumber(v) {
		return v
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return safeList(rv.Len(), func(i int) any { return rv.Index(i).Interface() }, depth)
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			m := make(map[string]any, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				m[it.Key().String()] = it.Value().Interface()
			}
			return safeMetadataValue(m, depth)
		}
	}
	return fmt.Sprint(v)
}

func safeList(n int, item func(int) any, depth int) []any {
	out := make([]any, 0, min(n, maxMetadataItems)+1)
	for i := 0; i < n && i < maxMetadataItems; i++ {
		out = append(out, safeMetadataValue(item(i), depth+1))
	}
	if n > maxMetadataItems {
		out = append(out, map[string]any{"truncated_items": n - maxMetadataItems})
	}
	return out
}

func safeMembers(n int, member func(int) (string, any), depth int) map[string]any {
	out := make(map[string]any, min(n, maxMetadataKeys)+1)
	for i := 0; i < n && i < maxMetadataKeys; i++ {
		key, raw := member(i)
		switch {
		case isSecretKey(key):
			if raw == nil || raw == "" {
				out[key] = raw
			} else {
				out[key] = "[redacted]"
			}
		case inlineMediaKeys[lowerTrim(key)] && isLongString(raw, maxInlineMediaText):
			out[key] = map[string]any{"chars": pyval.Len(raw.(string)), "redacted": true}
		case raw != nil && reflect.TypeOf(raw).Kind() == reflect.Func:
			// Python drops callables.
		default:
			out[key] = safeMetadataValue(raw, depth+1)
		}
	}
	if n > maxMetadataKeys {
		out["truncated_keys"] = n - maxMetadataKeys
	}
	return out
}

func isLongString(v any, limit int) bool {
	s, ok := v.(string)
	return ok && pyval.Len(s) > limit
}

// isSecretKey reports whether a member's key names a credential: one of
// secretKeys, containing a secretKeyFragments entry, or holding the word
// password, secret or token between non-alphanumeric ASCII separators.
func isSecretKey(key string) bool {
	k := lowerTrim(key)
	if secretKeys[k] {
		return true
	}
	for _, f := range secretKeyFragments {
		if strings.Contains(k, f) {
			return true
		}
	}
	isWordChar := func(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' }
	for _, word := range strings.FieldsFunc(k, func(r rune) bool { return !isWordChar(r) }) {
		if secretKeyWords[word] {
			return true
		}
	}
	return false
}
