package snapshot

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// MemoryStore is an in-process Store keeping deep copies.
type MemoryStore struct {
	// NowFunc is the clock for CreatedAt/UpdatedAt; nil means time.Now.
	NowFunc func() time.Time

	mu    sync.RWMutex
	snaps map[string]*durable.Snapshot
}

var _ Store = (*MemoryStore)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *MemoryStore {
	return &MemoryStore{snaps: map[string]*durable.Snapshot{}}
}

// Save implements Store.
func (m *MemoryStore) Save(ctx context.Context, s *durable.Snapshot) error {
	if err := prepare(s, m.NowFunc); err != nil {
		return err
	}
	c := clone(s)
	if s.RunState != nil {
		// Normalised, the copy shares no typed container ([]string,
		// map[string]string) with the caller, and Load returns the value
		// types the JSON store's do; clone copies what it then holds.
		rs, err := pyjson.NormalizeObject(s.RunState)
		if err != nil {
			return fmt.Errorf("snapshot: save %s: run state: %w", s.SnapshotID, err)
		}
		c.RunState = rs
	} else {
		c.RunState = map[string]any{} // as the JSON store reads back the {} it writes
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snaps[c.SnapshotID] = c
	return nil
}

// Load implements Store.
func (m *MemoryStore) Load(ctx context.Context, id string) (*durable.Snapshot, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.snaps[id]
	if !ok {
		return nil, fmt.Errorf("snapshot %s: %w", id, store.ErrNotFound)
	}
	return clone(s), nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(ctx context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.snaps[id]
	delete(m.snaps, id)
	return ok, nil
}

// List implements Store.
func (m *MemoryStore) List(ctx context.Context, p ListParams) ([]*durable.Snapshot, error) {
	m.mu.RLock()
	var out []*durable.Snapshot
	for _, s := range m.snaps {
		if p.Matches(s) {
			out = append(out, s)
		}
	}
	m.mu.RUnlock()
	out = sortAndLimit(out, p.Limit)
	for i, s := range out {
		out[i] = clone(s)
	}
	return out, nil
}
