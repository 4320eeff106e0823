// Package offload is a store.Store decorator that keeps persisted run
// state and ledger records small by moving oversized values into an
// artifact store (spec §4.7, Python OffloadingRunStore and
// OffloadingLedgerStore).
//
// Ledger records are always offloaded: in each record appended by
// RunCommit or LedgerAppend, large members of the effect payload (paths
// ledger.effect.payload…, tag source=ledger_effect_offload) and of the
// result (paths ledger.result…, tag source=ledger_result_offload) become
// artifact refs; the effect and result objects themselves are never
// replaced.
//
// Run state is offloaded only when the run is terminal (completed, failed
// or cancelled), because a live run may need its exact values after a
// crash: values at depth ≥2 under vars keys starting with "_" (paths like
// vars._runtime.node_traces, tag source=run_store_offload), except the
// run identity members vars._meta.occurrence and vars._meta.creation_digest,
// the memory span index and the tree cancel marker
// (vars._runtime.cancelled_with), and the output anywhere, its root included
// (tag source=run_output_offload).
//
// Offloading changes only the copy passed to the inner store. The
// caller's RunState and StepRecords keep their full values; the inner
// store's bookkeeping (the run's Version, the records' Seq) is copied
// back to them. An offloading failure is logged and the value is stored
// as it is.
//
// Stacking: place this decorator outside a hash-chaining one, so the hash
// covers the record as stored (spec §4.10).
package offload

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Tag values of the "source" tag of offloaded artifacts.
const (
	SourceLedgerEffect = artifact.SourceLedgerEffect
	SourceLedgerResult = artifact.SourceLedgerResult
	SourceRunVars      = artifact.SourceRunVars
	SourceRunOutput    = artifact.SourceRunOutput
)

// Config configures the decorator.
type Config struct {
	// MaxInlineBytes is the offload threshold in bytes: 0 means the
	// ABSTRACTRUNTIME_MAX_INLINE_BYTES environment variable or 262144
	// (artifact.MaxInlineBytes), negative disables offloading.
	MaxInlineBytes int
	// Logger receives best-effort offloading failures; nil discards them.
	Logger *slog.Logger
}

// Store is the offloading decorator. Every method it does not override
// is the inner store's.
type Store struct {
	store.Wrapper
	artifacts artifact.Store
	limit     int
	logger    *slog.Logger
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.AtomicCommitter = (*Store)(nil)
	_ store.LedgerFinder    = (*Store)(nil)
	_ store.RunClaimer      = (*Store)(nil)
)

// Wrap returns inner decorated with offloading into artifacts. The
// threshold is resolved once, here.
func Wrap(inner store.Store, artifacts artifact.Store, cfg Config) *Store {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Store{
		Wrapper:   store.Wrapper{Store: inner},
		artifacts: artifacts,
		limit:     artifact.MaxInlineBytes(cfg.MaxInlineBytes),
		logger:    logger.WithGroup("offload"),
	}
}

// Inner returns the decorated store.
func (s *Store) Inner() store.Store { return s.Store }

// RunCommit offloads the records (and, for a terminal run, the run state)
// in copies, commits the copies, then copies the new Version and the
// records' Seq back to p.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	_, err := s.RunCommitStored(ctx, p)
	return err
}

// RunCommitStored is RunCommit returning the records as stored
// (store.CopyingWriter).
func (s *Store) RunCommitStored(ctx context.Context, p *store.CommitParams) ([]*durable.StepRecord, error) {
	if s.limit <= 0 || p.Run == nil {
		return p.Records, s.Store.RunCommit(ctx, p)
	}
	records, recordsChanged := s.offloadRecords(ctx, p.Run.RunID, p.Records)
	run, runChanged := s.offloadRun(ctx, p.Run)
	if !recordsChanged && !runChanged {
		return p.Records, s.Store.RunCommit(ctx, p)
	}
	err := s.Store.RunCommit(ctx, &store.CommitParams{Run: run, Create: p.Create, Records: records})
	p.Run.Version = run.Version
	copySeq(p.Records, records)
	return records, err
}

// LedgerAppend offloads the records in copies, appends the copies, then
// copies their Seq back.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	_, err := s.LedgerAppendStored(ctx, runID, records)
	return err
}

// LedgerAppendStored is LedgerAppend returning the records as stored
// (store.CopyingWriter).
func (s *Store) LedgerAppendStored(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error) {
	if s.limit <= 0 {
		return records, s.Store.LedgerAppend(ctx, runID, records)
	}
	copies, changed := s.offloadRecords(ctx, runID, records)
	if !changed {
		return records, s.Store.LedgerAppend(ctx, runID, records)
	}
	err := s.Store.LedgerAppend(ctx, runID, copies)
	copySeq(records, copies)
	return copies, err
}

// LedgerFindCompleted finds the completed record in the inner store and
// puts back the values offloaded from its result: the runtime reuses that
// result on replay, and must write what the effect returned into the
// vars, not refs to it. It does so whatever the threshold: records
// written while offloading was on (or by Python's offloading store) hold
// refs after it is turned off.
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	rec, err := store.FindCompleted(ctx, s.Store, runID, key)
	if err != nil || rec == nil {
		return rec, err
	}
	if rec.Result, err = s.restore(ctx, runID, rec.Result); err != nil {
		return nil, fmt.Errorf("offload: restoring the result of %s in run %s: %w", key, runID, err)
	}
	return rec, nil
}

// restore returns v with the refs this decorator made of a result
// replaced by their content. It is best effort, as Python's
// find_completed_result rehydration keeps a ref it cannot resolve: a ref
// to damaged or undecodable content stays a ref
// (artifact.RestoreReadable), or one bad blob would fail every tick of
// the run that replays the effect; other artifact store errors (I/O)
// are still returned, so a transient fault is retried rather than
// replayed with a ref in place of the value. An artifact is this
// decorator's if its source tag is one of the ledger's. Ids are content
// addressed per run: we give a later payload holding the same text an id
// of its own (artifact.Offload), but Python (and our releases before that)
// re-tagged the result's artifact as SourceLedgerEffect, and such ledgers
// are still read. Refs the effect itself returned stay, among them refs to
// another run's offloaded values (every offloaded artifact carries the run
// of its record).
func (s *Store) restore(ctx context.Context, runID string, v any) (any, error) {
	return artifact.RestoreReadable(ctx, s.artifacts, v, func(m *artifact.Metadata) bool {
		src := m.Tags["source"]
		return m.RunID == runID && (src == SourceLedgerResult || src == SourceLedgerEffect)
	})
}

// copySeq copies back what the inner stores set on the records they
// stored: the seq, and the hashes and signature a hash-chaining store
// inside this one computed.
func copySeq(dst, src []*durable.StepRecord) {
	for i := range dst {
		dst[i].Seq = src[i].Seq
		if !src[i].PrevHashEmptyNotNull() {
			// A chaining store set it (a first record's "" read as such
			// then written as null); otherwise both still hold "" as read.
			dst[i].SetPrevHash(src[i].PrevHash)
		}
		dst[i].RecordHash, dst[i].Signature = src[i].RecordHash, src[i].Signature
	}
}

// offloadRecords returns records with offloaded copies in place of the
// records that changed, and whether any did.
func (s *Store) offloadRecords(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, bool) {
	var out []*durable.StepRecord
	for i, r := range records {
		c, changed := s.offloadRecord(ctx, runID, r)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]*durable.StepRecord(nil), records...)
		}
		out[i] = c
	}
	if out == nil {
		return records, false
	}
	return out, true
}

// offloadRecord returns a shallow copy of r with its effect payload and
// result offloaded, or r itself when nothing was offloaded.
func (s *Store) offloadRecord(ctx context.Context, runID string, r *durable.StepRecord) (*durable.StepRecord, bool) {
	if r == nil {
		return r, false
	}
	rid := cmp.Or(r.RunID, runID)
	c := *r
	changed := false
	if r.Effect != nil && r.Effect.Payload != nil {
		// The effect object is {type, payload, result_key}; as in Python,
		// its payload member may be replaced by a ref, the effect may not.
		v := s.offload(ctx, r.Effect.Payload, artifact.OffloadOptions{
			RunID:            rid,
			BaseTags:         map[string]string{"source": SourceLedgerEffect},
			RootPath:         "ledger.effect.payload",
			AllowRootReplace: true,
		})
		if m, ok := v.(map[string]any); ok && !sameMap(m, r.Effect.Payload) {
			e := *r.Effect
			e.Payload = m
			c.Effect = &e
			changed = true
		}
	}
	if r.Result != nil {
		v := s.offload(ctx, r.Result, artifact.OffloadOptions{
			RunID:    rid,
			BaseTags: map[string]string{"source": SourceLedgerResult},
			RootPath: "ledger.result",
		})
		if !sameValue(v, r.Result) {
			c.Result = v
			changed = true
		}
	}
	if !changed {
		return r, false
	}
	return &c, true
}

// offloadRun returns a copy of a terminal run with its private vars and
// output offloaded, or run itself when nothing was offloaded.
func (s *Store) offloadRun(ctx context.Context, run *durable.RunState) (*durable.RunState, bool) {
	if !run.Status.Terminal() || run.RunID == "" {
		return run, false
	}
	var vars map[string]any
	// In key order, not Go's random map order: namespaces holding the same
	// large value share one content-addressed artifact whose path tag is
	// the last one stored, and the same run state must always give the
	// same tag (Python walks vars in insertion order).
	for _, key := range slices.Sorted(maps.Keys(run.Vars)) {
		v := run.Vars[key]
		if !strings.HasPrefix(key, "_") {
			continue
		}
		nv := s.offload(ctx, v, artifact.OffloadOptions{
			RunID:     run.RunID,
			BaseTags:  map[string]string{"source": SourceRunVars},
			RootPath:  "vars." + key,
			AllowFunc: allowPrivateVars,
		})
		if sameValue(nv, v) {
			continue
		}
		if vars == nil {
			vars = make(map[string]any, len(run.Vars))
			for k2, v2 := range run.Vars {
				vars[k2] = v2
			}
		}
		vars[key] = nv
	}
	var output map[string]any
	if run.Output != nil {
		nv := s.offload(ctx, run.Output, artifact.OffloadOptions{
			RunID:            run.RunID,
			BaseTags:         map[string]string{"source": SourceRunOutput},
			RootPath:         "output",
			AllowRootReplace: true,
		})
		if m, ok := nv.(map[string]any); ok && !sameMap(m, run.Output) {
			output = m
		}
	}
	if vars == nil && output == nil {
		return run, false
	}
	c := *run
	if vars != nil {
		c.Vars = vars
	}
	if output != nil {
		c.Output = output
	}
	return &c, true
}

// allowPrivateVars keeps the vars namespaces themselves inline: only paths
// with at least two dots under vars._… may be offloaded (the Python rule,
// so vars._temp.big and vars._temp.big[3] may, vars._temp[0] may not).
// The memory span index, the tree cancel marker and the run identity
// members stay inline whole.
func allowPrivateVars(path string, _ any) bool {
	if within(path, memorySpansPath) || within(path, cancelledWithPath) {
		return false
	}
	for _, p := range identityPaths {
		if within(path, p) {
			return false
		}
	}
	return strings.HasPrefix(path, "vars._") && strings.Count(path, ".") >= 2
}

// within reports whether path is root or a path inside it.
func within(path, root string) bool {
	rest, ok := strings.CutPrefix(path, root)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// memorySpansPath is the memory span index of a run, kept inline: a
// terminal run still receives notes (a session's memory owner is stored
// completed), and a note appends to the list it reads; a ref there read as
// "no spans" dropped every earlier span (Python loses them the same way).
const memorySpansPath = "vars._runtime.memory_spans"

// cancelledWithPath is the marker a tree cancel leaves on each run it
// ends (runtime's cancelledWithKey: the run the Cancel was aimed at and
// its reason), kept inline: the cancelled run is terminal, and a parent a
// kill left waiting on it reads the marker to learn that the cancel
// covered the parent too. A ref there (a long reason) read as "no
// marker", and the parent went on with its child's cancelled end. Python
// has no such marker.
const cancelledWithPath = "vars._runtime.cancelled_with"

// identityPaths are the members of vars._meta that a Start naming an
// existing run id compares with the run it would create (runtime/start.go
// checkIdentity, Python's IDENTITY_META_KEYS). A ref there (the digest is
// 71 bytes, under a small threshold) made every such Start an identity
// conflict once the run was terminal. Spec §4.7 promises they are never
// offloaded; Python's OffloadingRunStore has no such exemption and offloads
// them like any other vars._meta member.
var identityPaths = [...]string{"vars._meta.occurrence", "vars._meta.creation_digest"}

// offload runs artifact.Offload best-effort: on error it logs and returns
// v unchanged.
func (s *Store) offload(ctx context.Context, v any, opts artifact.OffloadOptions) any {
	opts.MaxInlineBytes = s.limit
	out, err := artifact.Offload(ctx, s.artifacts, v, opts)
	if err != nil {
		s.logger.WarnContext(ctx, "offloading failed; storing the value inline",
			slog.String("run_id", opts.RunID), slog.String("path", opts.RootPath), slog.Any("error", err))
		return v
	}
	return out
}

// sameMap reports whether a and b are the same map (not equal contents):
// artifact.Offload returns its input itself when nothing changed.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// sameValue is identity for maps and slices and equality for scalars.
func sameValue(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() {
		return va.IsValid() == vb.IsValid()
	}
	if va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return va.Pointer() == vb.Pointer()
	case reflect.Slice:
		return va.Pointer() == vb.Pointer() && va.Len() == vb.Len()
	}
	return va.Comparable() && vb.Comparable() && va.Equal(vb)
}
