package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// IndexRow derives the listing row of a run; backends without columns of
// their own use it.
func IndexRow(r *durable.RunState) RunIndexRow {
	row := RunIndexRow{
		RunID:        r.RunID,
		WorkflowID:   r.WorkflowID,
		Status:       r.Status,
		ParentRunID:  r.ParentRunID,
		ActorID:      r.ActorID,
		SessionID:    r.SessionID,
		CreatedAt:    r.CreatedAt,
		UpdatedAt:    r.UpdatedAt,
		RunLifecycle: RunLifecycle(r.Vars),
	}
	if r.Waiting != nil {
		row.WaitReason = r.Waiting.Reason
		row.WaitUntil = r.Waiting.Until
	}
	return row
}

// Deadline returns the wait deadline a due-index keeps for r: the until of
// a waiting run that has one (WAIT_UNTIL, or WAIT_EVENT with a timeout),
// unless a host paused the run. The scheduler skips a paused run, so
// listing it as due would only take a place in every batch (a batch's
// worth of paused runs would hold back every other due run); the commit
// that lifts the pause indexes the deadline again.
func Deadline(r *durable.RunState) (durable.Time, bool) {
	if r.Status != durable.RunWaiting || r.Waiting == nil || !r.Waiting.ReleasedWhenDue() || hostPaused(r) {
		return durable.Time{}, false
	}
	return durable.NewTime(r.Waiting.Until.Time), true // as stored: UTC, to the microsecond
}

// hostPaused is r.HostPaused as a read of r would answer it: a pause the
// caller wrote through typed maps (map[string]bool) counts, so that stores
// indexing what they were given agree with those indexing what they read.
func hostPaused(r *durable.RunState) bool {
	if r.HostPaused() {
		return true
	}
	// Only _runtime.control.paused counts: the value where that path
	// leaves plain maps is normalised, not the whole of _runtime (the
	// kernel's own holds Go ints, and every indexed commit asks).
	path := []string{"_runtime", "control", "paused"}
	v := any(r.Vars)
	for len(path) > 0 {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		v, path = m[path[0]], path[1:]
	}
	if _, plain := v.(bool); v == nil || len(path) == 0 && plain {
		return false // what HostPaused read
	}
	n, err := pyjson.Normalize(v)
	if err != nil {
		return false
	}
	for _, key := range path {
		m, _ := n.(map[string]any)
		n = m[key]
	}
	paused, _ := n.(bool)
	return paused
}

// Matches reports whether r passes the filters of p (Limit aside).
func (p *RunListParams) Matches(r *durable.RunState) bool {
	if p.Status != "" && r.Status != p.Status {
		return false
	}
	if p.WaitReason != "" && (r.Waiting == nil || r.Waiting.Reason != p.WaitReason) {
		return false
	}
	if p.WorkflowID != "" && r.WorkflowID != p.WorkflowID {
		return false
	}
	if p.SessionID != "" && r.SessionID != p.SessionID {
		return false
	}
	if p.ParentID != "" && r.ParentRunID != p.ParentID {
		return false
	}
	if p.ActorID != "" && r.ActorID != p.ActorID {
		return false
	}
	if len(p.WaitKeys) > 0 && (r.Waiting == nil || r.Waiting.WaitKey == "" || !slices.Contains(p.WaitKeys, r.Waiting.WaitKey)) {
		return false
	}
	return true
}

// Matches reports whether row passes the filters of p (Limit aside),
// Before included (row.UpdatedAt as stored, to the microsecond). The
// session id is compared trimmed on both sides, and RootOnly keeps a run
// whose parent id is blank once trimmed, as Python's in-memory and JSON
// stores do: a run Python stored with a padded session id is found by
// that id, trimmed or not, and one with a whitespace parent id is a root.
func (p *RunIndexParams) Matches(row *RunIndexRow) bool {
	if p.Status != "" && row.Status != p.Status {
		return false
	}
	if p.WorkflowID != "" && row.WorkflowID != p.WorkflowID {
		return false
	}
	if sid := pyval.Strip(p.SessionID); sid != "" && pyval.Strip(row.SessionID) != sid {
		return false
	}
	if p.RootOnly && pyval.Strip(row.ParentRunID) != "" {
		return false
	}
	if p.ExcludeWorkflowPrefix != "" && strings.HasPrefix(row.WorkflowID, p.ExcludeWorkflowPrefix) {
		return false
	}
	if p.ActorID != "" && row.ActorID != p.ActorID {
		return false
	}
	if p.Before != nil && !p.Before.After(row.UpdatedAt, row.RunID) {
		return false
	}
	return true
}

var lifecycleKeys = []string{"source", "purpose", "visibility", "run_mode", "editor_session_id",
	"flow_id", "bundle_id", "bundle_version"}

// RunLifecycleKey is the vars key of a run's lifecycle metadata.
const RunLifecycleKey = "_run_lifecycle"

// RunLifecycle returns the sanitised vars._run_lifecycle: known string
// keys trimmed to 240 characters and a retention object with a positive
// integer ttl_s; nil when absent or empty.
func RunLifecycle(vars map[string]any) map[string]any {
	raw := vars[RunLifecycleKey]
	if raw != nil && !pyjson.IsNormalized(raw) {
		// In the types a read gives (a map[string]string, an int32 ttl):
		// stores that index what the caller committed must find what
		// those indexing what they read back find.
		if n, err := pyjson.Normalize(raw); err == nil {
			raw = n
		}
	}
	src, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]any{}
	for _, k := range lifecycleKeys {
		if s, ok := src[k].(string); ok {
			if s = trim240(s); s != "" {
				out[k] = s
			}
		}
	}
	if ret, ok := src["retention"].(map[string]any); ok {
		r := map[string]any{}
		for _, k := range []string{"mode", "expires_at"} {
			if s, ok := ret[k].(string); ok {
				if s = trim240(s); s != "" {
					r[k] = s
				}
			}
		}
		if ttl, ok := positiveInt(ret["ttl_s"]); ok {
			r["ttl_s"] = ttl
		}
		if len(r) > 0 {
			out["retention"] = r
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// trim240 trims s to 240 characters, in memory of its own: s may be a
// slice of a whole run document that the lifecycle would keep alive.
func trim240(s string) string {
	s = pyval.Strip(s)
	if r := []rune(s); len(r) > 240 {
		return string(r[:240])
	}
	return strings.Clone(s)
}

// RecordFromRow decodes a ledger row of a SQL backend: the record JSON
// (stored without seq) and the row's seq.
func RecordFromRow(seq int64, recordJSON []byte) (*durable.StepRecord, error) {
	rec, err := durable.UnmarshalRecord(recordJSON)
	if err != nil {
		return nil, fmt.Errorf("seq %d: %w", seq, err)
	}
	rec.Seq = seq
	return rec, nil
}

// ReadableRecord is RecordFromRow for a listing that skips what does not
// decode, as Python's ledger stores skip it: such a row is logged on log
// and gives nil.
func ReadableRecord(ctx context.Context, log *slog.Logger, runID string, seq int64, recordJSON []byte) *durable.StepRecord {
	rec, err := RecordFromRow(seq, recordJSON)
	if err != nil {
		log.WarnContext(ctx, "skipping undecodable ledger record", "run_id", runID, "seq", seq, "error", err)
	}
	return rec
}
