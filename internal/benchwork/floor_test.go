package benchwork

import (
	"context"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// sharingStore keeps the objects it is given and returns them as they are,
// as Python's InMemoryRunStore does with runs: no copy, no isolation. It is
// a measurement aid for BenchmarkW1KernelFloor, never a store to use: a
// caller's later change to a run or record changes what it holds. Only the
// calls W1 and its verification make are its own; the rest go to an empty
// in-memory store.
type sharingStore struct {
	store.Store
	mu      sync.Mutex
	runs    map[string]*durable.RunState
	ledgers map[string][]*durable.StepRecord
}

func newSharingStore() *sharingStore {
	return &sharingStore{Store: memory.New(), runs: map[string]*durable.RunState{}, ledgers: map[string][]*durable.StepRecord{}}
}

func (s *sharingStore) AtomicCommit() bool { return true }

func (s *sharingStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := p.Run.RunID
	if cur, ok := s.runs[id]; (ok && p.Create) || (!ok && !p.Create) || (ok && cur.Version != p.Run.Version) {
		return store.ErrConflict
	}
	p.Run.Version++
	s.runs[id] = p.Run
	l := s.ledgers[id]
	for _, r := range p.Records {
		r.Seq = int64(len(l)) + 1
		l = append(l, r)
	}
	s.ledgers[id] = l
	return nil
}

func (s *sharingStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[runID]; ok {
		return r, nil
	}
	return nil, store.ErrNotFound
}

func (s *sharingStore) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.ledgers[p.RunID]
	l = l[min(int(p.After), len(l)):]
	if p.Limit > 0 {
		l = l[:min(p.Limit, len(l))]
	}
	return append([]*durable.StepRecord(nil), l...), nil
}

// BenchmarkW1KernelFloor is W1 over sharingStore: the kernel's own cost
// per run, with no store copy to pay. Set beside BenchmarkW1Chain/memory,
// the difference is what the in-memory store's isolation costs
// (docs/benchmarks.md).
func BenchmarkW1KernelFloor(b *testing.B) {
	env, err := envOn("sharing", newSharingStore())
	if err != nil {
		b.Fatal(err)
	}
	env.Store.Timed = true
	b.Cleanup(func() { _ = env.Close() })
	benchRun(b, env, W1Chain)
}
