package durable

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Snapshot is a named copy of a run state a host can restore later.
type Snapshot struct {
	SnapshotID  string
	RunID       string
	StepID      string
	Name        string
	Description string
	Tags        []string // the string tags; see tagsRead
	CreatedAt   Time
	UpdatedAt   Time
	RunState    map[string]any // the full RunState JSON object

	// tagsRead keeps a tags list read with non-string elements as given
	// (Python's stores keep list(tags) whole and write it back), while
	// Tags holds its strings for filtering; written in place of Tags while
	// Tags still holds those strings. nil when every tag is a string.
	// Never modified in place: copies of the struct share it.
	tagsRead []any

	// createdText and updatedText keep a created_at/updated_at read as
	// text ParseTime cannot read (Python's JsonSnapshotStore keeps any
	// non-empty string), written back while CreatedAt/UpdatedAt stay zero.
	createdText, updatedText string
}

// JSONValue returns the wire object (Python key order).
func (s *Snapshot) JSONValue() pyjson.Ordered {
	var tags []any
	if raw := s.rawTags(); raw != nil {
		tags = pyjson.Clone(raw).([]any)
	} else {
		tags = make([]any, len(s.Tags))
		for i, t := range s.Tags {
			tags[i] = t
		}
	}
	state := s.RunState
	if state == nil {
		state = map[string]any{}
	}
	return pyjson.Ordered{
		{Key: "snapshot_id", Value: s.SnapshotID},
		{Key: "run_id", Value: s.RunID},
		{Key: "step_id", Value: nullString(s.StepID)},
		{Key: "name", Value: s.Name},
		{Key: "description", Value: nullString(s.Description)},
		{Key: "tags", Value: tags},
		{Key: "created_at", Value: timeOrText(s.CreatedAt, s.createdText)},
		{Key: "updated_at", Value: timeOrText(s.UpdatedAt, s.updatedText)},
		{Key: "run_state", Value: state},
	}
}

// CreatedAtText reports the created_at text kept as read, written while
// CreatedAt is zero: a store keeps it on a save, as Python's does.
func (s *Snapshot) CreatedAtText() string {
	if !s.CreatedAt.IsZero() {
		return ""
	}
	return s.createdText
}

// rawTags returns tagsRead while Tags still holds its strings, in order:
// a caller that assigned Tags since has replaced the list.
func (s *Snapshot) rawTags() []any {
	if s.tagsRead == nil {
		return nil
	}
	i := 0
	for _, t := range s.tagsRead {
		if ts, ok := t.(string); ok {
			if i >= len(s.Tags) || s.Tags[i] != ts {
				return nil
			}
			i++
		}
	}
	if i != len(s.Tags) {
		return nil
	}
	return s.tagsRead
}

// SnapshotFromJSON builds a Snapshot from a decoded JSON object.
func SnapshotFromJSON(m map[string]any) (*Snapshot, error) {
	// Python's from_dict indexes both keys, so a file without them is
	// unreadable there (and a list skips it); here an id-less snapshot
	// could be listed but neither loaded nor deleted.
	for _, k := range []string{"snapshot_id", "run_id"} {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("snapshot: %s is missing", k)
		}
	}
	var s Snapshot
	var err error
	if s.SnapshotID, err = getString(m, "snapshot_id"); err != nil {
		return nil, err
	}
	if s.RunID, err = getString(m, "run_id"); err != nil {
		return nil, err
	}
	if s.StepID, err = getString(m, "step_id"); err != nil {
		return nil, err
	}
	if s.Name, err = getString(m, "name"); err != nil {
		return nil, err
	}
	if s.Description, err = getString(m, "description"); err != nil {
		return nil, err
	}
	if tags, ok := m["tags"].([]any); ok {
		allStrings := true
		for _, t := range tags {
			if ts, ok := t.(string); ok {
				s.Tags = append(s.Tags, ts)
			} else {
				allStrings = false
			}
		}
		if !allStrings {
			s.tagsRead = pyjson.Clone(tags).([]any) // the others are kept for the wire
		}
	}
	if s.CreatedAt, s.createdText, err = asTimeOrText("created_at", m["created_at"]); err != nil {
		return nil, err
	}
	if s.UpdatedAt, s.updatedText, err = asTimeOrText("updated_at", m["updated_at"]); err != nil {
		return nil, err
	}
	if s.RunState, err = getObject(m, "run_state"); err != nil {
		return nil, err
	}
	return &s, nil
}
