package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// CommandAppend implements store.CommandStore.
func (s *Store) CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error) {
	payload, err := store.PrepareCommand(c, time.Now())
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("memory: command append: %w", err)
	}
	// The payload kept is its encoding decoded: a deep copy, in the types
	// a durable store's read gives.
	stored, err := pyjson.DecodeObject(payload)
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("memory: command append: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq, ok := s.cmdByID[c.CommandID]; ok {
		return durable.CommandAppendResult{Duplicate: true, Seq: seq}, nil
	}
	cp := *c
	cp.Payload = stored
	s.cmdSeq++
	cp.Seq = s.cmdSeq
	c.Seq = cp.Seq
	s.commands = append(s.commands, &cp)
	s.cmdByID[cp.CommandID] = cp.Seq
	return durable.CommandAppendResult{Accepted: true, Seq: cp.Seq}, nil
}

// CommandListAfter implements store.CommandStore.
func (s *Store) CommandListAfter(ctx context.Context, after int64, limit int) ([]*durable.CommandRecord, int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if limit <= 0 {
		limit = 1000
	}
	var out []*durable.CommandRecord
	next := after
	for _, c := range s.commands {
		if c.Seq <= after {
			continue
		}
		if len(out) == limit {
			break
		}
		cp := *c
		cp.Payload = pyjson.CloneObject(c.Payload)
		out = append(out, &cp)
		next = c.Seq
	}
	return out, next, nil
}

// CommandLastSeq implements store.CommandStore.
func (s *Store) CommandLastSeq(ctx context.Context) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cmdSeq, nil // the counter: a delete does not take it back
}

// CommandDeleteByRun implements store.CommandStore.
func (s *Store) CommandDeleteByRun(ctx context.Context, runID string) (int, error) {
	runID = pyval.Strip(runID)
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.commands[:0]
	n := 0
	for _, c := range s.commands {
		if c.RunID == runID {
			n++
			delete(s.cmdByID, c.CommandID)
			continue
		}
		kept = append(kept, c)
	}
	s.commands = kept
	return n, nil
}

// CursorLoad implements store.CommandStore.
func (s *Store) CursorLoad(ctx context.Context, consumer string) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cursors[consumer], nil
}

// CursorSave implements store.CommandStore.
func (s *Store) CursorSave(ctx context.Context, consumer string, cursor int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursors[consumer] = cursor
	return nil
}
