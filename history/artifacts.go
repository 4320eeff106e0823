package history

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// runArtifacts summarises the artifacts a run owns, oldest first, at most
// MaxArtifactsPerRun of them; none without an artifact store.
func (e *exporter) runArtifacts(ctx context.Context, runID string) ([]any, error) {
	metas, err := e.oldestArtifacts(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(metas))
	for i, m := range metas {
		out[i] = artifactSummary(m)
	}
	return out, nil
}

// oldestArtifacts lists a run's artifacts by (created_at, artifact_id)
// and keeps the first MaxArtifactsPerRun.
func (e *exporter) oldestArtifacts(ctx context.Context, runID string) ([]*artifact.Metadata, error) {
	if e.src.Artifacts == nil || pyval.Strip(runID) == "" {
		return nil, nil
	}
	metas, err := e.src.Artifacts.ListByRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("listing artifacts of run %s: %w", runID, err)
	}
	// created_at is compared as text, as Python sorts it.
	slices.SortStableFunc(metas, func(a, b *artifact.Metadata) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ArtifactID, b.ArtifactID))
	})
	return metas[:min(len(metas), MaxArtifactsPerRun)], nil
}

// treeArtifacts summarises the artifacts of several runs (a session turn
// and its descendants): each run's oldest first, an artifact once, at
// most MaxArtifactsPerRun in all.
func (e *exporter) treeArtifacts(ctx context.Context, runIDs []string) ([]any, error) {
	out := []any{}
	seen := map[string]bool{}
	for _, rid := range runIDs {
		metas, err := e.oldestArtifacts(ctx, rid)
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			if m.ArtifactID == "" || seen[m.ArtifactID] {
				continue
			}
			seen[m.ArtifactID] = true
			out = append(out, artifactSummary(m))
			if len(out) == MaxArtifactsPerRun {
				return out, nil
			}
		}
	}
	return out, nil
}

// artifactSummary is the bounded view of an artifact's metadata carried
// by a bundle (no content).
func artifactSummary(m *artifact.Metadata) map[string]any {
	wire := wireObject(m.JSONValue())
	return map[string]any{
		"artifact_id":  wire["artifact_id"],
		"blob_id":      wire["blob_id"],
		"run_id":       wire["run_id"],
		"content_type": wire["content_type"],
		"size_bytes":   wire["size_bytes"],
		"created_at":   wire["created_at"],
		"tags":         bounded(wire["tags"], 0),
		"descriptor":   bounded(wire["descriptor"], 0),
		"metadata":     bounded(wire["metadata"], 0),
		"access":       bounded(wire["access"], 0),
	}
}
