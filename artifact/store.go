package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrNotFound: no artifact has this id (or its content is gone, or
	// FS cannot decode its metadata file, as Python reads it as None).
	ErrNotFound = errors.New("artifact not found")
	// ErrInvalidID: the id is empty or has characters outside
	// [a-zA-Z0-9_-] (see ValidID).
	ErrInvalidID = errors.New("invalid artifact id")
	// ErrDamaged: the artifact's content file does not hold its content
	// (its size is not the metadata's size_bytes).
	ErrDamaged = errors.New("artifact content damaged")
)

// ReadSeekCloser is an artifact's content opened by Store.Open.
type ReadSeekCloser interface {
	io.Reader
	io.Seeker
	io.Closer
}

// DefaultContentType is the content type of a Put without one.
const DefaultContentType = "application/octet-stream"

// Store keeps artifacts: content bytes plus Metadata. Ids given to any
// method are checked with ValidID and refused with ErrInvalidID.
type Store interface {
	// Put stores content and returns its metadata. The id is p.ArtifactID
	// or ComputeID(p.RunID, p.Content); storing an existing id replaces
	// its metadata (created_at and access stats included).
	Put(ctx context.Context, p PutParams) (*Metadata, error)
	// Get returns an artifact's metadata and content, or ErrNotFound.
	Get(ctx context.Context, id string) (*Metadata, []byte, error)
	// Open returns an artifact's metadata and its content as a stream the
	// caller closes, for content too large to hold in memory (a gateway
	// serving a download, with ranges: it seeks). Errors as Get's,
	// ErrDamaged included; the content is not read before the caller
	// reads it.
	Open(ctx context.Context, id string) (*Metadata, ReadSeekCloser, error)
	// Metadata returns an artifact's metadata without its content, or
	// ErrNotFound. It does not count as an access.
	Metadata(ctx context.Context, id string) (*Metadata, error)
	// Exists reports whether the artifact and its content exist.
	Exists(ctx context.Context, id string) (bool, error)
	// Delete removes an artifact's metadata (not a shared blob) and
	// reports whether it existed.
	Delete(ctx context.Context, id string) (bool, error)
	// ListByRun returns the artifacts whose run id is exactly runID
	// ("" lists those without a run), newest first.
	ListByRun(ctx context.Context, runID string) ([]*Metadata, error)
	// ListAll returns up to limit artifacts (≤0: all), newest first.
	ListAll(ctx context.Context, limit int) ([]*Metadata, error)
	// DeleteByRun deletes every artifact whose run id is exactly runID
	// and returns how many.
	DeleteByRun(ctx context.Context, runID string) (int, error)
	// UpdateMetadata merges (or replaces) tags, structured metadata and
	// descriptor members, then renormalises the descriptor. ErrNotFound
	// when the artifact does not exist.
	UpdateMetadata(ctx context.Context, p UpdateParams) (*Metadata, error)
	// RecordAccess counts one explicit access (preview, download…).
	RecordAccess(ctx context.Context, p AccessParams) (*Metadata, error)
	// Search filters artifacts by metadata (not semantic search), ordered
	// by created_at then artifact_id.
	Search(ctx context.Context, p SearchParams) ([]*Metadata, error)
	// Count returns the number of artifacts matching p's filters (its
	// Offset, Order and Limit are ignored).
	Count(ctx context.Context, p SearchParams) (int, error)
	// FacetCounts counts the artifacts matching p's filters by the value
	// of field (see FacetValue), "(none)" for an empty value, sorted by
	// count descending then value.
	FacetCounts(ctx context.Context, field string, p SearchParams) ([]FacetCount, error)
	// Stats returns the total count and bytes of the matching artifacts
	// and the facet counts of each field in facets.
	Stats(ctx context.Context, facets []string, p SearchParams) (*Stats, error)
	// Close releases what the store holds open (FS: its connection to
	// Python's artifact catalog). It is safe to call twice, and the store
	// stays usable: a host that shares one store between components may
	// close it at shutdown without ordering their last calls.
	Close() error
}

// PutParams is the input of Store.Put.
type PutParams struct {
	Content     []byte
	ContentType string // "" means DefaultContentType
	RunID       string // "" means no run
	Tags        map[string]string
	// Metadata is structured producer data; it must be JSON.
	Metadata map[string]any
	// Descriptor holds declared descriptor members; nil means none were
	// declared (the classification is then inferred).
	Descriptor map[string]any
	// ArtifactID overrides the computed id; it must satisfy ValidID.
	ArtifactID string
}

// UpdateParams is the input of Store.UpdateMetadata. A nil map leaves that
// part alone; a non-nil map (even empty) is merged, or replaces the old
// one with ReplaceTags / ReplaceMetadata.
type UpdateParams struct {
	ID              string
	Tags            map[string]string
	Metadata        map[string]any
	Descriptor      map[string]any
	ReplaceTags     bool
	ReplaceMetadata bool
}

// AccessParams is the input of Store.RecordAccess. Action "" means
// "access"; "metadata", "content" (or load/read/open), "preview" and
// "download" also bump their own counters.
type AccessParams struct {
	ID        string
	Action    string
	ActorID   string
	SessionID string
	RunID     string
	At        string // isoformat time; "" means now
}

// newMetadata builds the metadata of a Put, normalised and round-tripped
// through JSON so that every store returns the same value types as one
// read back from a .meta file.
func newMetadata(p PutParams, now time.Time) (*Metadata, error) {
	id := p.ArtifactID
	if id == "" {
		id = ComputeID(p.RunID, p.Content)
	}
	if err := checkID(id); err != nil {
		return nil, err
	}
	// Stored as JSON, such text would come back with U+FFFD in place of
	// its bad bytes, and no look-up by what the caller gave would match.
	if !utf8.ValidString(p.RunID) {
		return nil, fmt.Errorf("artifact run id %q is not UTF-8", p.RunID)
	}
	for k, v := range p.Tags {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, fmt.Errorf("artifact tag %q = %q is not UTF-8", k, v)
		}
	}
	ct := p.ContentType
	if ct == "" {
		ct = DefaultContentType
	}
	tags := map[string]string{}
	for k, v := range p.Tags {
		if k = pyval.Strip(k); k != "" {
			tags[k] = v
		}
	}
	desc := descriptorFromJSON(p.Descriptor)
	m := &Metadata{
		ArtifactID:  id,
		BlobID:      BlobID(p.Content),
		ContentType: ct,
		SizeBytes:   int64(len(p.Content)),
		CreatedAt:   durable.FormatTime(now),
		RunID:       p.RunID,
		Tags:        tags,
		Metadata:    objectOrEmpty(p.Metadata),
		Descriptor:  normalizeDescriptor(desc, p.Descriptor != nil, ct, p.RunID, tags, inspectMedia(p.Content, ct)),
		Access:      AccessStats{Actions: map[string]int{}},
	}
	return roundTrip(m)
}

// roundTrip encodes m and decodes it again: it checks that m is JSON and
// gives its maps the decoder's value types (json.Number and so on).
func roundTrip(m *Metadata) (*Metadata, error) {
	b, err := encodeMeta(m)
	if err != nil {
		return nil, err
	}
	return ParseMetadata(b)
}

// encodeMeta is the .meta file text: indent 2, non-ASCII raw.
func encodeMeta(m *Metadata) ([]byte, error) {
	b, err := pyjson.Marshal(m.JSONValue(), pyjson.Pretty)
	if err != nil {
		return nil, fmt.Errorf("encoding metadata of artifact %s: %w", m.ArtifactID, err)
	}
	return b, nil
}

// applyUpdate is the shared body of UpdateMetadata.
func applyUpdate(m *Metadata, p UpdateParams) (*Metadata, error) {
	m = m.Clone()
	if p.Tags != nil {
		if p.ReplaceTags {
			m.Tags = map[string]string{}
		}
		for k, v := range p.Tags {
			if k = pyval.Strip(k); k != "" {
				m.Tags[k] = v
			}
		}
	}
	if p.Metadata != nil {
		if p.ReplaceMetadata {
			m.Metadata = map[string]any{}
		}
		for k, v := range pyjson.CloneObject(p.Metadata) {
			m.Metadata[k] = v
		}
	}
	if p.Descriptor != nil || p.Tags != nil {
		base := m.Descriptor.toMap()
		if p.Descriptor != nil {
			base = mergeDescriptor(base, p.Descriptor)
		}
		m.Descriptor = normalizeDescriptor(descriptorFromJSON(base), true, m.ContentType, m.RunID, m.Tags, nil)
	}
	return roundTrip(m)
}

// PutText stores text as UTF-8; p.ContentType "" means "text/plain".
// p.Content is ignored.
func PutText(ctx context.Context, st Store, text string, p PutParams) (*Metadata, error) {
	p.Content = []byte(text)
	if p.ContentType == "" {
		p.ContentType = "text/plain"
	}
	return st.Put(ctx, p)
}

// PutJSON stores v as compact JSON (separators "," and ":", non-ASCII
// raw) with content type application/json. p.Content and p.ContentType
// are ignored.
func PutJSON(ctx context.Context, st Store, v any, p PutParams) (*Metadata, error) {
	b, err := compactJSON(v)
	if err != nil {
		return nil, fmt.Errorf("storing JSON artifact: %w", err)
	}
	p.Content = b
	p.ContentType = "application/json"
	return st.Put(ctx, p)
}

// compactJSON is Python json.dumps(v, ensure_ascii=False,
// separators=(",", ":")), keys sorted (Go maps have no order).
func compactJSON(v any) ([]byte, error) {
	return pyjson.Marshal(v, pyjson.Canonical)
}

// LoadText returns an artifact's content as a string.
func LoadText(ctx context.Context, st Store, id string) (string, error) {
	_, b, err := st.Get(ctx, id)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// LoadJSON decodes an artifact's content as JSON (the generic tree of
// pyjson.Decode: numbers as json.Number).
func LoadJSON(ctx context.Context, st Store, id string) (any, error) {
	_, b, err := st.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	v, err := pyjson.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("loading JSON artifact %s: %w", id, err)
	}
	return v, nil
}

func formatNow(now func() time.Time) string {
	return durable.FormatTime(now())
}
