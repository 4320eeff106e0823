package artifact

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Descriptor schema constants.
const (
	DescriptorSchema        = "abstractruntime.artifact_descriptor.v1"
	DescriptorSchemaVersion = 1
)

// Metadata describes a stored artifact. Its JSON form (JSONValue) is the
// .meta file of the file store and the Python ArtifactMetadata dict.
type Metadata struct {
	ArtifactID  string
	BlobID      string // "" is null
	ContentType string
	SizeBytes   int64
	// CreatedAt is the Python isoformat() text of the last store of this
	// id (durable.FormatTime). Searches compare it as a string.
	CreatedAt  string
	RunID      string            // "" is null
	Tags       map[string]string // never nil on stored metadata
	Metadata   map[string]any    // structured producer data; never nil on stored metadata
	Descriptor Descriptor
	Access     AccessStats
}

// Descriptor is the versioned description of an artifact (Python
// ArtifactDescriptor). Id fields use "" for null.
type Descriptor struct {
	Schema               string
	SchemaVersion        int
	SemanticKind         string
	RenderKind           string
	Modality             string
	Task                 string
	ClassificationSource string
	SessionID            string
	WorkflowID           string
	NodeID               string
	StepID               string
	EffectID             string
	TurnID               string
	LedgerCursor         string
	ParentRunID          string
	ActorID              string
	Producer             map[string]any
	Provenance           map[string]any
	Generation           map[string]any
	Media                map[string]any
	SourceRefs           []any
	Links                map[string]any
	Security             map[string]any
	Actions              map[string]any
}

// AccessStats counts explicit accesses recorded with Store.RecordAccess.
type AccessStats struct {
	AccessCount         int
	MetadataAccessCount int
	ContentAccessCount  int
	PreviewCount        int
	DownloadCount       int
	LastAccessedAt      string // "" is null
	LastAction          string
	LastActorID         string
	LastSessionID       string
	LastRunID           string
	Actions             map[string]int // action -> count
}

// Clone returns a deep copy of m.
func (m *Metadata) Clone() *Metadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Tags = cloneTags(m.Tags)
	c.Metadata = pyjson.CloneObject(m.Metadata)
	c.Descriptor = m.Descriptor.clone()
	c.Access.Actions = make(map[string]int, len(m.Access.Actions))
	for k, v := range m.Access.Actions {
		c.Access.Actions[k] = v
	}
	return &c
}

func (d Descriptor) clone() Descriptor {
	d.Producer = pyjson.CloneObject(d.Producer)
	d.Provenance = pyjson.CloneObject(d.Provenance)
	d.Generation = pyjson.CloneObject(d.Generation)
	d.Media = pyjson.CloneObject(d.Media)
	if d.SourceRefs != nil {
		d.SourceRefs = pyjson.Clone(d.SourceRefs).([]any)
	}
	d.Links = pyjson.CloneObject(d.Links)
	d.Security = pyjson.CloneObject(d.Security)
	d.Actions = pyjson.CloneObject(d.Actions)
	return d
}

func cloneTags(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

// JSONValue returns the metadata as an ordered wire object (Python key
// order).
func (m *Metadata) JSONValue() pyjson.Ordered {
	tags := make(map[string]any, len(m.Tags))
	for k, v := range m.Tags {
		tags[k] = v
	}
	return pyjson.Ordered{
		{Key: "artifact_id", Value: m.ArtifactID},
		{Key: "blob_id", Value: nullString(m.BlobID)},
		{Key: "content_type", Value: m.ContentType},
		{Key: "size_bytes", Value: m.SizeBytes},
		{Key: "created_at", Value: m.CreatedAt},
		{Key: "run_id", Value: nullString(m.RunID)},
		{Key: "tags", Value: tags},
		{Key: "metadata", Value: emptyIfNil(m.Metadata)},
		{Key: "descriptor", Value: m.Descriptor.JSONValue()},
		{Key: "access", Value: m.Access.JSONValue()},
	}
}

// MarshalJSON encodes the metadata compactly, keys in Python order and
// non-ASCII raw.
func (m *Metadata) MarshalJSON() ([]byte, error) {
	return pyjson.Marshal(m.JSONValue(), pyjson.Style{Compact: true})
}

// UnmarshalJSON decodes metadata written by this package or by Python.
func (m *Metadata) UnmarshalJSON(data []byte) error {
	got, err := ParseMetadata(data)
	if err != nil {
		return err
	}
	*m = *got
	return nil
}

// ParseMetadata decodes a .meta document. Like Python's from_dict it is
// lenient: tag values are stringified and the descriptor is normalised
// (so legacy files without one get a derived descriptor).
func ParseMetadata(data []byte) (*Metadata, error) {
	obj, err := pyjson.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decoding artifact metadata: %w", err)
	}
	m, err := MetadataFromJSON(obj)
	if err != nil {
		return nil, fmt.Errorf("decoding artifact metadata: %w", err)
	}
	return m, nil
}

// MetadataFromJSON builds Metadata from a decoded JSON object. artifact_id
// and content_type are required.
func MetadataFromJSON(obj map[string]any) (*Metadata, error) {
	id, ok := obj["artifact_id"].(string)
	if !ok || id == "" {
		return nil, fmt.Errorf("field \"artifact_id\" is missing")
	}
	ct, ok := obj["content_type"].(string)
	if !ok {
		return nil, fmt.Errorf("field \"content_type\" is missing")
	}
	m := &Metadata{
		ArtifactID:  id,
		BlobID:      pyStr(obj["blob_id"]),
		ContentType: ct,
		SizeBytes:   toInt64(obj["size_bytes"]),
		CreatedAt:   pyStr(obj["created_at"]),
		RunID:       pyStr(obj["run_id"]),
		Tags:        strDict(obj["tags"]),
		Metadata:    objectOrEmpty(obj["metadata"]),
		Access:      accessFromJSON(obj["access"]),
	}
	d, declared := obj["descriptor"].(map[string]any)
	m.Descriptor = normalizeDescriptor(descriptorFromJSON(d), declared, ct, m.RunID, m.Tags, nil)
	return m, nil
}

// JSONValue returns the descriptor as an ordered wire object.
func (d Descriptor) JSONValue() pyjson.Ordered {
	refs := d.SourceRefs
	if refs == nil {
		refs = []any{}
	}
	return pyjson.Ordered{
		{Key: "schema", Value: d.Schema},
		{Key: "schema_version", Value: d.SchemaVersion},
		{Key: "semantic_kind", Value: d.SemanticKind},
		{Key: "render_kind", Value: d.RenderKind},
		{Key: "modality", Value: d.Modality},
		{Key: "task", Value: d.Task},
		{Key: "classification_source", Value: d.ClassificationSource},
		{Key: "session_id", Value: nullString(d.SessionID)},
		{Key: "workflow_id", Value: nullString(d.WorkflowID)},
		{Key: "node_id", Value: nullString(d.NodeID)},
		{Key: "step_id", Value: nullString(d.StepID)},
		{Key: "effect_id", Value: nullString(d.EffectID)},
		{Key: "turn_id", Value: nullString(d.TurnID)},
		{Key: "ledger_cursor", Value: nullString(d.LedgerCursor)},
		{Key: "parent_run_id", Value: nullString(d.ParentRunID)},
		{Key: "actor_id", Value: nullString(d.ActorID)},
		{Key: "producer", Value: emptyIfNil(d.Producer)},
		{Key: "provenance", Value: emptyIfNil(d.Provenance)},
		{Key: "generation", Value: emptyIfNil(d.Generation)},
		{Key: "media", Value: emptyIfNil(d.Media)},
		{Key: "source_refs", Value: refs},
		{Key: "links", Value: emptyIfNil(d.Links)},
		{Key: "security", Value: emptyIfNil(d.Security)},
		{Key: "actions", Value: emptyIfNil(d.Actions)},
	}
}

// toMap is the descriptor as a plain object (Python to_dict).
func (d Descriptor) toMap() map[string]any {
	o := d.JSONValue()
	out := make(map[string]any, len(o))
	for _, kv := range o {
		out[kv.Key] = kv.Value
	}
	return out
}

// descriptorFromJSON is Python ArtifactDescriptor.from_dict: strings are
// trimmed (kinds lower-cased), empty ids become null, non-object members
// become empty objects.
func descriptorFromJSON(m map[string]any) Descriptor {
	version := int(toInt64(m["schema_version"]))
	if version == 0 {
		version = DescriptorSchemaVersion
	}
	refs, _ := m["source_refs"].([]any)
	return Descriptor{
		Schema:               cmpOr(pyStr(m["schema"]), DescriptorSchema),
		SchemaVersion:        version,
		SemanticKind:         lowerTrim(pyStr(m["semantic_kind"])),
		RenderKind:           lowerTrim(pyStr(m["render_kind"])),
		Modality:             lowerTrim(pyStr(m["modality"])),
		Task:                 lowerTrim(pyStr(m["task"])),
		ClassificationSource: pyval.Strip(pyStr(m["classification_source"])),
		SessionID:            pyval.Strip(pyStr(m["session_id"])),
		WorkflowID:           pyval.Strip(pyStr(m["workflow_id"])),
		NodeID:               pyval.Strip(pyStr(m["node_id"])),
		StepID:               pyval.Strip(pyStr(m["step_id"])),
		EffectID:             pyval.Strip(pyStr(m["effect_id"])),
		TurnID:               pyval.Strip(pyStr(m["turn_id"])),
		LedgerCursor:         pyval.Strip(pyStr(m["ledger_cursor"])),
		ParentRunID:          pyval.Strip(pyStr(m["parent_run_id"])),
		ActorID:              pyval.Strip(pyStr(m["actor_id"])),
		Producer:             objectOrEmpty(m["producer"]),
		Provenance:           objectOrEmpty(m["provenance"]),
		Generation:           objectOrEmpty(m["generation"]),
		Media:                objectOrEmpty(m["media"]),
		SourceRefs:           pyjson.Clone(nonNilList(refs)).([]any),
		Links:                objectOrEmpty(m["links"]),
		Security:             objectOrEmpty(m["security"]),
		Actions:              objectOrEmpty(m["actions"]),
	}
}

// JSONValue returns the access stats as an ordered wire object.
func (a AccessStats) JSONValue() pyjson.Ordered {
	actions := make(map[string]any, len(a.Actions))
	for k, v := range a.Actions {
		actions[k] = v
	}
	return pyjson.Ordered{
		{Key: "access_count", Value: a.AccessCount},
		{Key: "metadata_access_count", Value: a.MetadataAccessCount},
		{Key: "content_access_count", Value: a.ContentAccessCount},
		{Key: "preview_count", Value: a.PreviewCount},
		{Key: "download_count", Value: a.DownloadCount},
		{Key: "last_accessed_at", Value: nullString(a.LastAccessedAt)},
		{Key: "last_action", Value: nullString(a.LastAction)},
		{Key: "last_actor_id", Value: nullString(a.LastActorID)},
		{Key: "last_session_id", Value: nullString(a.LastSessionID)},
		{Key: "last_run_id", Value: nullString(a.LastRunID)},
		{Key: "actions", Value: actions},
	}
}

func accessFromJSON(v any) AccessStats {
	m, _ := v.(map[string]any)
	count := func(k string) int { return int(max(0, toInt64(m[k]))) }
	a := AccessStats{
		AccessCount:         count("access_count"),
		MetadataAccessCount: count("metadata_access_count"),
		ContentAccessCount:  count("content_access_count"),
		PreviewCount:        count("preview_count"),
		DownloadCount:       count("download_count"),
		LastAccessedAt:      pyval.Strip(pyStr(m["last_accessed_at"])),
		LastAction:          pyval.Strip(pyStr(m["last_action"])),
		LastActorID:         pyval.Strip(pyStr(m["last_actor_id"])),
		LastSessionID:       pyval.Strip(pyStr(m["last_session_id"])),
		LastRunID:           pyval.Strip(pyStr(m["last_run_id"])),
		Actions:             map[string]int{},
	}
	if acts, ok := m["actions"].(map[string]any); ok {
		for k, v := range acts {
			if n, ok := intValue(v); ok {
				a.Actions[k] = int(max(0, n))
			}
		}
	}
	return a
}

// record applies one access event (Python ArtifactAccessStats.record).
func (a *AccessStats) record(p AccessParams, now string) {
	action := lowerTrim(p.Action)
	if action == "" {
		action = "access"
	}
	if a.Actions == nil {
		a.Actions = map[string]int{}
	}
	a.AccessCount++
	a.Actions[action]++
	switch action {
	case "metadata":
		a.MetadataAccessCount++
	case "content", "load", "read", "open":
		a.ContentAccessCount++
	case "preview":
		a.PreviewCount++
	case "download":
		a.DownloadCount++
	}
	a.LastAccessedAt = cmpOr(p.At, now)
	a.LastAction = action
	a.LastActorID = pyval.Strip(p.ActorID)
	a.LastSessionID = pyval.Strip(p.SessionID)
	a.LastRunID = pyval.Strip(p.RunID)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func emptyIfNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func nonNilList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lowerTrim is Python's s.strip().lower(), whose rules (final sigma, "İ",
// the U+001C..U+001F separators) Go's ToLower and TrimSpace do not follow.
func lowerTrim(s string) string { return pyval.Lower(pyval.Strip(s)) }

// objectOrEmpty returns a deep copy of v when it is an object, else {}.
func objectOrEmpty(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	return pyjson.CloneObject(m)
}

// strDict is Python _str_dict: keys trimmed (empty dropped), null values
// dropped, other values stringified.
func strDict(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		k = pyval.Strip(k)
		if k == "" || x == nil {
			continue
		}
		out[k] = pyStrAll(x)
	}
	return out
}

// pyStr is Python str(v or ""): falsy values ("", 0, false, null, empty
// containers) give "".
func pyStr(v any) string {
	if !truthy(v) {
		return ""
	}
	return pyStrAll(v)
}

// pyStrAll is Python str(v) for JSON values: lists and objects as their
// Python repr.
func pyStrAll(v any) string { return pyval.Str(v) }

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case bool:
		return x
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case float64:
		return x != 0
	case int:
		return x != 0
	case int64:
		return x != 0
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// intValue converts a JSON number (or numeric string) to an integer the
// way Python int() does, truncating floats.
func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		f, err := x.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return int64(f), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return int64(x), true
	case int:
		return int64(x), true
	case int64:
		return x, true
	case string:
		i, err := pyval.ToInt(x) // int("7\x1f"), int("1_000") read as Python's
		return i, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func toInt64(v any) int64 {
	n, _ := intValue(v)
	return n
}
