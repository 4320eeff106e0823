package artifact

import (
	"cmp"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// SearchParams filters Search, Count, FacetCounts and Stats. Zero fields
// do not filter.
type SearchParams struct {
	RunID       string
	ContentType string
	// Tags keeps artifacts carrying every given pair exactly.
	Tags map[string]string
	// SemanticKind, RenderKind and Modality compare lower-cased.
	SemanticKind string
	RenderKind   string
	Modality     string
	SessionID    string
	WorkflowID   string
	NodeID       string
	// CreatedAfter and CreatedBefore are inclusive bounds compared as
	// strings with created_at (use durable.FormatTime).
	CreatedAfter  string
	CreatedBefore string
	Offset        int
	// Order is "asc" for oldest first; anything else is newest first.
	Order string
	// Limit caps the result; ≤0 means no limit (callers wanting Python's
	// default pass 1000).
	Limit int
}

// FacetCount is one row of FacetCounts.
type FacetCount struct {
	Value string
	Count int
}

// FacetNone is the facet value of artifacts with an empty field.
const FacetNone = "(none)"

// Stats is the answer of Store.Stats.
type Stats struct {
	Total      int
	TotalBytes int64
	// Facets holds one entry per requested field, in request order.
	Facets []Facet
	// Filters are the non-empty filters applied, keyed by their Python
	// keyword names.
	Filters map[string]any
	Exact   bool
	// Source is "artifact_catalog" when an index answered, else
	// "artifact_store_scan".
	Source string
}

// Facet is the counts of one field in Stats.
type Facet struct {
	Field  string
	Counts []FacetCount
}

// Facet returns the counts of field, or nil when it was not requested.
func (s *Stats) Facet(field string) []FacetCount {
	for _, f := range s.Facets {
		if f.Field == field {
			return f.Counts
		}
	}
	return nil
}

// Stats sources.
const (
	SourceScan    = "artifact_store_scan"
	SourceCatalog = "artifact_catalog"
)

// JSONValue returns the stats in the Python dict shape; each facet is an
// object whose members keep the count order.
func (s *Stats) JSONValue() pyjson.Ordered {
	facets := make(pyjson.Ordered, 0, len(s.Facets))
	for _, f := range s.Facets {
		facets = append(facets, pyjson.KV{Key: f.Field, Value: FacetsJSON(f.Counts)})
	}
	filters := s.Filters
	if filters == nil {
		filters = map[string]any{}
	}
	return pyjson.Ordered{
		{Key: "total", Value: s.Total},
		{Key: "total_bytes", Value: s.TotalBytes},
		{Key: "facets", Value: facets},
		{Key: "filters", Value: filters},
		{Key: "exact", Value: s.Exact},
		{Key: "source", Value: s.Source},
	}
}

// FacetsJSON returns facet rows as an ordered object value -> count.
func FacetsJSON(rows []FacetCount) pyjson.Ordered {
	o := make(pyjson.Ordered, 0, len(rows))
	for _, r := range rows {
		o = append(o, pyjson.KV{Key: r.Value, Value: r.Count})
	}
	return o
}

// filterMap lists the non-empty filters of p (for Stats.Filters).
func (p SearchParams) filterMap() map[string]any {
	out := map[string]any{}
	add := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	add("run_id", p.RunID)
	add("content_type", p.ContentType)
	if len(p.Tags) > 0 {
		tags := make(map[string]any, len(p.Tags))
		for k, v := range p.Tags {
			tags[k] = v
		}
		out["tags"] = tags
	}
	add("semantic_kind", p.SemanticKind)
	add("render_kind", p.RenderKind)
	add("modality", p.Modality)
	add("session_id", p.SessionID)
	add("workflow_id", p.WorkflowID)
	add("node_id", p.NodeID)
	add("created_after", p.CreatedAfter)
	add("created_before", p.CreatedBefore)
	return out
}

// matches reports whether m passes every filter of p.
func (p SearchParams) matches(m *Metadata) bool {
	eq := func(got, want string) bool { return want == "" || got == want }
	d := &m.Descriptor
	if !eq(m.RunID, pyval.Strip(p.RunID)) ||
		!eq(m.ContentType, pyval.Strip(p.ContentType)) ||
		!eq(d.SemanticKind, lowerTrim(p.SemanticKind)) ||
		!eq(d.RenderKind, lowerTrim(p.RenderKind)) ||
		!eq(d.Modality, lowerTrim(p.Modality)) ||
		!eq(d.SessionID, pyval.Strip(p.SessionID)) ||
		!eq(d.WorkflowID, pyval.Strip(p.WorkflowID)) ||
		!eq(d.NodeID, pyval.Strip(p.NodeID)) {
		return false
	}
	if p.CreatedAfter != "" && m.CreatedAt < p.CreatedAfter {
		return false
	}
	if p.CreatedBefore != "" && m.CreatedAt > p.CreatedBefore {
		return false
	}
	// Keys as Python's _str_dict takes them: stripped, blank ones dropped
	// (no stored tag has one: strDict drops it on write too). Values are
	// compared as given, as Python's str(v) leaves a string.
	for k, v := range p.Tags {
		k = pyval.Strip(k)
		if k == "" {
			continue
		}
		got, ok := m.Tags[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}

// filterAll returns the metadata matching p's filters, unsorted.
func filterAll(all []*Metadata, p SearchParams) []*Metadata {
	var out []*Metadata
	for _, m := range all {
		if p.matches(m) {
			out = append(out, m)
		}
	}
	return out
}

// search applies p to all: filters, order, offset and limit. The result
// shares all's pointers; callers clone.
func search(all []*Metadata, p SearchParams) []*Metadata {
	out := filterAll(all, p)
	desc := lowerTrim(p.Order) != "asc"
	slices.SortFunc(out, func(a, b *Metadata) int {
		c := cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ArtifactID, b.ArtifactID))
		if desc {
			return -c
		}
		return c
	})
	out = out[min(max(0, p.Offset), len(out)):]
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out
}

// byRun returns the metadata whose run id is exactly runID ("" selects
// artifacts without a run, unlike the RunID filter), newest first.
func byRun(all []*Metadata, runID string) []*Metadata {
	var out []*Metadata
	for _, m := range all {
		if m.RunID == runID {
			out = append(out, m)
		}
	}
	return search(out, SearchParams{})
}

var descriptorFacets = map[string]func(*Descriptor) string{
	"semantic_kind":         func(d *Descriptor) string { return d.SemanticKind },
	"render_kind":           func(d *Descriptor) string { return d.RenderKind },
	"modality":              func(d *Descriptor) string { return d.Modality },
	"task":                  func(d *Descriptor) string { return d.Task },
	"classification_source": func(d *Descriptor) string { return d.ClassificationSource },
	"session_id":            func(d *Descriptor) string { return d.SessionID },
	"workflow_id":           func(d *Descriptor) string { return d.WorkflowID },
	"node_id":               func(d *Descriptor) string { return d.NodeID },
	"turn_id":               func(d *Descriptor) string { return d.TurnID },
	"actor_id":              func(d *Descriptor) string { return d.ActorID },
}

// FacetValue returns the value of a facet field for m: a descriptor field
// (semantic_kind, render_kind, modality, task, classification_source,
// session_id, workflow_id, node_id, turn_id, actor_id), a metadata field
// (content_type, run_id, artifact_id, created_at, blob_id), "tag:<name>"
// or "metadata:<key>". Unknown fields give "".
func FacetValue(m *Metadata, field string) string {
	field = pyval.Strip(field)
	if f, ok := descriptorFacets[field]; ok {
		return f(&m.Descriptor)
	}
	switch field {
	case "content_type":
		return m.ContentType
	case "run_id":
		return m.RunID
	case "artifact_id":
		return m.ArtifactID
	case "created_at":
		return m.CreatedAt
	case "blob_id":
		return m.BlobID
	}
	if name, ok := strings.CutPrefix(field, "tag:"); ok {
		return m.Tags[name]
	}
	if key, ok := strings.CutPrefix(field, "metadata:"); ok {
		return pyStr(m.Metadata[key])
	}
	return ""
}

// facetCounts counts matching metadata by field.
func facetCounts(matching []*Metadata, field string) []FacetCount {
	counts := map[string]int{}
	for _, m := range matching {
		v := FacetValue(m, field)
		if v == "" {
			v = FacetNone
		}
		counts[v]++
	}
	rows := make([]FacetCount, 0, len(counts))
	for v, n := range counts {
		rows = append(rows, FacetCount{Value: v, Count: n})
	}
	slices.SortFunc(rows, func(a, b FacetCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
	return rows
}

// stats computes Store.Stats over all metadata.
func stats(all []*Metadata, facets []string, p SearchParams, source string) *Stats {
	matching := filterAll(all, p)
	s := &Stats{
		Total:   len(matching),
		Facets:  make([]Facet, 0, len(facets)),
		Filters: p.filterMap(),
		Exact:   true,
		Source:  source,
	}
	for _, m := range matching {
		if m.SizeBytes >= 0 {
			s.TotalBytes += m.SizeBytes
		}
	}
	for _, f := range facets {
		s.Facets = append(s.Facets, Facet{Field: f, Counts: facetCounts(matching, f)})
	}
	return s
}

func cloneAll(ms []*Metadata) []*Metadata {
	out := make([]*Metadata, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out
}
