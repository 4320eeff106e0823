package artifact

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"
)

// Memory is an in-process Store for tests and ephemeral runtimes. It keeps
// private copies of everything it is given and returns copies, so callers
// can never change stored state by mutating a result.
type Memory struct {
	mu    sync.RWMutex
	now   func() time.Time
	items map[string]*memItem
}

type memItem struct {
	meta    *Metadata
	content []byte
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{now: time.Now, items: map[string]*memItem{}}
}

// Close does nothing: a Memory holds no resource. It is there so that
// Memory is a Store.
func (s *Memory) Close() error { return nil }

// SetClock replaces the clock that stamps created_at and access times
// (time.Now by default).
func (s *Memory) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

func (s *Memory) clock() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.now()
}

// Put implements Store.
func (s *Memory) Put(ctx context.Context, p PutParams) (*Metadata, error) {
	m, err := newMetadata(p, s.clock())
	if err != nil {
		return nil, fmt.Errorf("storing artifact: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[m.ArtifactID] = &memItem{meta: m, content: bytes.Clone(p.Content)}
	return m.Clone(), nil
}

func (s *Memory) lookup(id string) (*memItem, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	it, ok := s.items[id]
	if !ok {
		return nil, fmt.Errorf("artifact %s: %w", id, ErrNotFound)
	}
	return it, nil
}

// Get implements Store.
func (s *Memory) Get(ctx context.Context, id string) (*Metadata, []byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, err := s.lookup(id)
	if err != nil {
		return nil, nil, err
	}
	return it.meta.Clone(), bytes.Clone(it.content), nil
}

// Open implements Store: a reader over a copy of the content.
func (s *Memory) Open(ctx context.Context, id string) (*Metadata, ReadSeekCloser, error) {
	m, b, err := s.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return m, nopCloser{bytes.NewReader(b)}, nil
}

// nopCloser is a bytes.Reader with a Close that does nothing.
type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// Metadata implements Store.
func (s *Memory) Metadata(ctx context.Context, id string) (*Metadata, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	return it.meta.Clone(), nil
}

// Exists implements Store.
func (s *Memory) Exists(ctx context.Context, id string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.items[id]
	return ok, nil
}

// Delete implements Store.
func (s *Memory) Delete(ctx context.Context, id string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.items[id]
	delete(s.items, id)
	return ok, nil
}

// ListByRun implements Store.
func (s *Memory) ListByRun(ctx context.Context, runID string) ([]*Metadata, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return cloneAll(byRun(s.all(), runID)), nil
}

// ListAll implements Store.
func (s *Memory) ListAll(ctx context.Context, limit int) ([]*Metadata, error) {
	return s.Search(ctx, SearchParams{Limit: limit})
}

// DeleteByRun implements Store.
func (s *Memory) DeleteByRun(ctx context.Context, runID string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, it := range s.items {
		if it.meta.RunID == runID {
			delete(s.items, id)
			n++
		}
	}
	return n, nil
}

// UpdateMetadata implements Store.
func (s *Memory) UpdateMetadata(ctx context.Context, p UpdateParams) (*Metadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.lookup(p.ID)
	if err != nil {
		return nil, fmt.Errorf("updating artifact metadata: %w", err)
	}
	m, err := applyUpdate(it.meta, p)
	if err != nil {
		return nil, fmt.Errorf("updating artifact metadata: %w", err)
	}
	it.meta = m
	return m.Clone(), nil
}

// RecordAccess implements Store.
func (s *Memory) RecordAccess(ctx context.Context, p AccessParams) (*Metadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.lookup(p.ID)
	if err != nil {
		return nil, fmt.Errorf("recording artifact access: %w", err)
	}
	m := it.meta.Clone()
	m.Access.record(p, formatNow(s.now))
	it.meta = m
	return m.Clone(), nil
}

// Search implements Store.
func (s *Memory) Search(ctx context.Context, p SearchParams) ([]*Metadata, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return cloneAll(search(s.all(), p)), nil
}

// Count implements Store.
func (s *Memory) Count(ctx context.Context, p SearchParams) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(filterAll(s.all(), p)), nil
}

// FacetCounts implements Store.
func (s *Memory) FacetCounts(ctx context.Context, field string, p SearchParams) ([]FacetCount, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return facetCounts(filterAll(s.all(), p), field), nil
}

// Stats implements Store.
func (s *Memory) Stats(ctx context.Context, facets []string, p SearchParams) (*Stats, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return stats(s.all(), facets, p, SourceScan), nil
}

func (s *Memory) all() []*Metadata {
	out := make([]*Metadata, 0, len(s.items))
	for _, it := range s.items {
		out = append(out, it.meta)
	}
	return out
}
