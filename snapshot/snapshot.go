// Package snapshot stores named copies of run states (spec §1.10, §4.9)
// that a host can restore later by writing Snapshot.RunState back through
// its run store. Two implementations: an in-memory map (NewMemory) and the
// Python JsonSnapshotStore layout, one snapshot_<id>.json per snapshot
// (NewJSON).
package snapshot

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// Store persists snapshots.
type Store interface {
	// Save upserts s by SnapshotID. It assigns a UUID4 id when empty,
	// sets CreatedAt when zero and UpdatedAt to now on every save (on the
	// caller's struct too). The store keeps its own copy.
	Save(ctx context.Context, s *durable.Snapshot) error
	// Load returns a private copy of a snapshot, or store.ErrNotFound.
	Load(ctx context.Context, id string) (*durable.Snapshot, error)
	// Delete removes a snapshot and reports whether it existed.
	Delete(ctx context.Context, id string) (bool, error)
	// List returns the snapshots matching p, newest created_at first.
	List(ctx context.Context, p ListParams) ([]*durable.Snapshot, error)
}

// ListParams filters List. Zero fields do not filter.
type ListParams struct {
	RunID string // exact run id
	Tag   string // matches a tag equal to it once both are lower-cased as Python does
	Query string // case-insensitive substring of name or description
	// Limit caps the result; 0 means store.DefaultListLimit, negative
	// means 1.
	Limit int
}

// Matches reports whether s passes the filters of p (Limit aside).
func (p *ListParams) Matches(s *durable.Snapshot) bool {
	if p.RunID != "" && s.RunID != p.RunID {
		return false
	}
	if p.Tag != "" {
		tag := pyval.Lower(p.Tag) // Python compares lower(): not Unicode case folding
		if !slices.ContainsFunc(s.Tags, func(t string) bool { return pyval.Lower(t) == tag }) {
			return false
		}
	}
	if p.Query != "" {
		q := pyval.Lower(p.Query) // Python's lower(): "ΟΔΟΣ" → "οδος"
		if !strings.Contains(pyval.Lower(s.Name), q) && !strings.Contains(pyval.Lower(s.Description), q) {
			return false
		}
	}
	return true
}

// clone returns a deep copy of s.
func clone(s *durable.Snapshot) *durable.Snapshot {
	c := *s
	if s.Tags != nil {
		c.Tags = make([]string, len(s.Tags))
		copy(c.Tags, s.Tags)
	}
	c.RunState = pyjson.CloneObject(s.RunState)
	return &c
}

// prepare fills the defaults Save applies, on the caller's struct.
func prepare(s *durable.Snapshot, now func() time.Time) error {
	if s == nil {
		return fmt.Errorf("snapshot: save: snapshot is nil")
	}
	if s.SnapshotID == "" {
		s.SnapshotID = newUUID()
	}
	if now == nil {
		now = time.Now
	}
	t := durable.NewTime(now())
	if s.CreatedAt.IsZero() && s.CreatedAtText() == "" { // a created_at read as other text is kept
		s.CreatedAt = t
	} else {
		s.CreatedAt = durable.NewTime(s.CreatedAt.Time) // UTC to the microsecond, as a JSON file keeps it
	}
	s.UpdatedAt = t
	if s.Tags == nil {
		s.Tags = []string{}
	}
	if err := pyjson.Check(s.RunState, "run_state"); err != nil {
		return fmt.Errorf("snapshot: save %s: %w", s.SnapshotID, err)
	}
	return nil
}

// sortAndLimit orders snapshots newest created_at first (then by id) and
// applies the limit rules of store.EffectiveLimit.
func sortAndLimit(out []*durable.Snapshot, limit int) []*durable.Snapshot {
	slices.SortFunc(out, func(a, b *durable.Snapshot) int {
		if c := b.CreatedAt.Compare(a.CreatedAt.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.SnapshotID, b.SnapshotID)
	})
	return out[:min(len(out), store.EffectiveLimit(limit))]
}

// newUUID returns a random (version 4) UUID string.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
