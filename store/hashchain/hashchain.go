// Package hashchain makes a ledger tamper-evident: every record carries
// the hash of the record before it (prev_hash) and the SHA-256 of its own
// canonical JSON (record_hash), byte-identical to the Python runtime's
// HashChainedLedgerStore, so chains written by either implementation
// verify in the other.
package hashchain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// Store wraps a store.Store and chains every record it appends to the
// run's last record, read from the ledger at each append. A head cached
// in memory would be cheaper, but nothing cheap proves it still heads the
// ledger: with several runners on one database a run's claim passes from
// one to another, and another runner may even have deleted the ledger and
// grown a new one to the same length. Appends to one run must not overlap
// (the runtime's per-run lock and store claims ensure it).
type Store struct {
	store.Wrapper
	// stripes serialise the chaining of one run's appends (read the head,
	// append) while other runs' go on: the inner append is I/O, and a
	// single lock would queue every run behind it.
	stripes [64]sync.Mutex
}

var _ store.Store = (*Store)(nil)

// Wrap returns inner with a hash-chained ledger.
func Wrap(inner store.Store) *Store {
	return &Store{Wrapper: store.Wrapper{Store: inner}}
}

// RunCommit chains the records, then commits through the inner store.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if len(p.Records) == 0 || p.Run == nil {
		return s.Store.RunCommit(ctx, p) // nothing to chain, or refused there
	}
	// Only a run id the caller has just generated has no ledger yet: a
	// chosen one may have records (a ledger RunDelete kept, a create
	// whose state a non-atomic store failed to write).
	fresh := p.Create && p.RandomID
	return s.chained(ctx, p.Run.RunID, fresh, p.Records, func() error { return s.Store.RunCommit(ctx, p) })
}

// LedgerAppend chains the records, then appends through the inner store.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	return s.chained(ctx, runID, false, records, func() error { return s.Store.LedgerAppend(ctx, runID, records) })
}

// LedgerDelete deletes the run's ledger under the run's stripe: an append
// that read the head of the ledger being deleted must not write a record
// chained to it into the empty ledger.
func (s *Store) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	mu := s.stripe(runID)
	mu.Lock()
	defer mu.Unlock()
	return s.Store.LedgerDelete(ctx, runID)
}

// chained links records to the run's head (none for a fresh run) and
// writes them with write, under the run's stripe.
func (s *Store) chained(ctx context.Context, runID string, fresh bool, records []*durable.StepRecord, write func() error) error {
	mu := s.stripe(runID)
	mu.Lock()
	defer mu.Unlock()
	head, err := s.head(ctx, runID, fresh)
	if err != nil {
		return err
	}
	if err := chain(records, head); err != nil {
		return err
	}
	return write()
}

// head returns the record_hash of the run's last readable record ("" when
// none).
func (s *Store) head(ctx context.Context, runID string, fresh bool) (string, error) {
	if fresh {
		return "", nil
	}
	n, err := s.Store.LedgerCount(ctx, runID)
	if err != nil {
		return "", fmt.Errorf("hashchain: counting ledger of run %s: %w", runID, err)
	}
	if n == 0 {
		return "", nil
	}
	// n is the last seq: read that one record, the common case. When its
	// row does not decode (a torn append the listing skips), chain to the
	// last record the listing returns, as Python's _get_head takes
	// inner.list(run_id)[-1]: a window doubling backwards from the end
	// finds it without reading the whole ledger of a long run.
	for w := int64(1); ; w *= 2 {
		after := max(n-w, 0)
		recs, err := s.Store.LedgerList(ctx, &store.LedgerListParams{RunID: runID, After: after})
		if err != nil {
			return "", fmt.Errorf("hashchain: reading ledger head of run %s: %w", runID, err)
		}
		if len(recs) > 0 {
			return recs[len(recs)-1].RecordHash, nil
		}
		if after == 0 {
			return "", nil // no readable record
		}
	}
}

// stripe returns the lock of runID's stripe.
func (s *Store) stripe(runID string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runID))
	return &s.stripes[h.Sum32()%uint32(len(s.stripes))]
}

func chain(records []*durable.StepRecord, head string) error {
	for _, r := range records {
		// A first record's link is null, as Python writes it, even if the
		// caller's record was read with prev_hash "". The signature is the
		// caller's, kept as Python keeps it.
		r.SetPrevHash(head)
		h, err := RecordHash(r)
		if err != nil {
			return err
		}
		r.RecordHash = h
		head = h
	}
	return nil
}

// RecordHash is the SHA-256 (lower-case hex) of the record's canonical
// JSON without record_hash and signature, with its own prev_hash. It
// hashes the record as stored: a Go value whose object keys are not
// UTF-8 is stored with them as U+FFFD, which sorts elsewhere, so the hash
// of the value itself would not be the one a reader computes.
func RecordHash(r *durable.StepRecord) (string, error) {
	v, err := pyjson.Normalize(r.JSONValue(false))
	if err != nil {
		return "", fmt.Errorf("hashchain: %w", err)
	}
	b, err := pyjson.Append(make([]byte, 0, 512), v, pyjson.Canonical, "record")
	if err != nil {
		return "", fmt.Errorf("hashchain: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ChainError.Type values, as Python's report spells them.
const (
	PrevHashMismatch   = "prev_hash_mismatch"   // prev_hash is not the previous record's record_hash
	MissingRecordHash  = "missing_record_hash"  // a record without record_hash
	RecordHashMismatch = "record_hash_mismatch" // record_hash is not the hash of the record
)

// ChainError is one problem found by VerifyLedgerChain. Its JSON has the
// keys of its type, as Python's report has them, with null for "":
// {index, type, expected_prev_hash, actual_prev_hash} for a
// prev_hash_mismatch, {index, type, stored, computed} for a
// record_hash_mismatch, {index, type} for a missing_record_hash.
// ActualPrevEmpty marks an ActualPrev that was "" rather than null in the
// record (written as "").
type ChainError struct {
	Index           int    `json:"index"`
	Type            string `json:"type"` // PrevHashMismatch, MissingRecordHash or RecordHashMismatch
	ExpectedPrev    string `json:"expected_prev_hash,omitempty"`
	ActualPrev      string `json:"actual_prev_hash,omitempty"`
	ActualPrevEmpty bool   `json:"-"`
	Stored          string `json:"stored,omitempty"`
	Computed        string `json:"computed,omitempty"`
}

// MarshalJSON writes the keys of e's type (see ChainError).
func (e ChainError) MarshalJSON() ([]byte, error) {
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	switch e.Type {
	case PrevHashMismatch:
		actual := null(e.ActualPrev)
		if e.ActualPrev == "" && e.ActualPrevEmpty {
			actual = &e.ActualPrev
		}
		return json.Marshal(struct {
			Index        int     `json:"index"`
			Type         string  `json:"type"`
			ExpectedPrev *string `json:"expected_prev_hash"`
			ActualPrev   *string `json:"actual_prev_hash"`
		}{e.Index, e.Type, null(e.ExpectedPrev), actual})
	case RecordHashMismatch:
		return json.Marshal(struct {
			Index    int     `json:"index"`
			Type     string  `json:"type"`
			Stored   *string `json:"stored"`
			Computed *string `json:"computed"`
		}{e.Index, e.Type, null(e.Stored), null(e.Computed)})
	}
	type plain ChainError // without this method
	return json.Marshal(plain(e))
}

// Report is the result of VerifyLedgerChain.
type Report struct {
	OK               bool         `json:"ok"`
	Count            int          `json:"count"`
	Errors           []ChainError `json:"errors"`
	FirstBadIndex    *int         `json:"first_bad_index"`
	HeadHash         *string      `json:"head_hash"`
	ComputedHeadHash *string      `json:"computed_head_hash"`
}

// VerifyLedgerChain walks records in order and checks every link and
// hash. A record without record_hash stops the walk.
func VerifyLedgerChain(records []*durable.StepRecord) Report {
	rep := Report{Count: len(records), Errors: []ChainError{}}
	expected := ""
	var walked string
	add := func(e ChainError) {
		rep.Errors = append(rep.Errors, e)
		if rep.FirstBadIndex == nil {
			i := e.Index
			rep.FirstBadIndex = &i
		}
	}
	for i, r := range records {
		// expected is null or a record_hash, never "": a prev_hash stored
		// as "" is a broken link, as in Python.
		if empty := r.PrevHashEmptyNotNull(); r.PrevHash != expected || empty {
			add(ChainError{Index: i, Type: PrevHashMismatch, ExpectedPrev: expected, ActualPrev: r.PrevHash, ActualPrevEmpty: empty})
		}
		if r.RecordHash == "" {
			add(ChainError{Index: i, Type: MissingRecordHash})
			break
		}
		computed, err := RecordHash(r)
		if err != nil || computed != r.RecordHash {
			add(ChainError{Index: i, Type: RecordHashMismatch, Stored: r.RecordHash, Computed: computed})
		}
		expected = r.RecordHash
		walked = r.RecordHash
	}
	if n := len(records); n > 0 && records[n-1].RecordHash != "" {
		h := records[n-1].RecordHash
		rep.HeadHash = &h
	}
	if walked != "" {
		rep.ComputedHeadHash = &walked
	}
	rep.OK = len(rep.Errors) == 0
	return rep
}
