package benchwork

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Op is one kind of store call counted by a Counting store.
type Op int

// The counted store calls. Command-store calls are lumped together: no
// workload makes them.
const (
	OpRunCommit Op = iota
	OpRunGet
	OpRunList
	OpRunListDue
	OpRunNextDue
	OpRunListChildren
	OpRunIndex
	OpRunDelete
	OpLedgerAppend
	OpLedgerList
	OpLedgerCount
	OpLedgerDelete
	OpLedgerFindCompleted
	OpRunClaim
	OpRunRelease
	OpCommand
	numOps
)

var opNames = [numOps]string{
	OpRunCommit: "run_commit", OpRunGet: "run_get", OpRunList: "run_list",
	OpRunListDue: "run_list_due", OpRunNextDue: "run_next_due",
	OpRunListChildren: "run_list_children", OpRunIndex: "run_index", OpRunDelete: "run_delete",
	OpLedgerAppend: "ledger_append", OpLedgerList: "ledger_list", OpLedgerCount: "ledger_count",
	OpLedgerDelete: "ledger_delete", OpLedgerFindCompleted: "ledger_find_completed",
	OpRunClaim: "run_claim", OpRunRelease: "run_release", OpCommand: "command",
}

// String returns the op's name as used in ops_per_run.
func (o Op) String() string { return opNames[o] }

// Counts is a snapshot of the calls a Counting store has seen.
type Counts struct {
	Ops [numOps]int64
	// RecordsAppended is the number of ledger records written through
	// RunCommit and LedgerAppend.
	RecordsAppended int64
	// FileWrites is what a JSON-file store writes for these calls: one
	// run-file replacement (temp file + rename) per RunCommit, plus one
	// ledger append (a single write(2)) per call that carries records.
	FileWrites int64
	// StoreTime is the time spent inside the store calls the workloads
	// make (run commits and gets, due lists, ledger appends, lists and
	// look-ups): with the run time, it splits a run between the store and
	// the kernel.
	StoreTime time.Duration
}

// Commits is the number of store write calls: RunCommit, LedgerAppend,
// RunClaim and RunRelease, each durable when it returns. On the SQLite
// store with its redo log (the default), a RunCommit of a run its cache
// knows, or of a new run, is one durable redo-log write (one fdatasync
// with synchronous=FULL), batched into SQLite transactions in the
// background; other writes, and every write of a shared store, are one
// SQLite transaction each (one WAL fsync with FULL).
func (c Counts) Commits() int64 {
	return c.Ops[OpRunCommit] + c.Ops[OpLedgerAppend] + c.Ops[OpRunClaim] + c.Ops[OpRunRelease]
}

// Sub returns c − o.
func (c Counts) Sub(o Counts) Counts {
	for i := range c.Ops {
		c.Ops[i] -= o.Ops[i]
	}
	c.RecordsAppended -= o.RecordsAppended
	c.FileWrites -= o.FileWrites
	c.StoreTime -= o.StoreTime
	return c
}

// PerRun returns the non-zero call counts divided by runs, keyed by op
// name.
func (c Counts) PerRun(runs int) map[string]float64 {
	out := map[string]float64{}
	for i, n := range c.Ops {
		if n != 0 {
			out[Op(i).String()] = round(float64(n)/float64(runs), 3)
		}
	}
	return out
}

// Counting wraps a store.Store and counts its calls. Wrap returns it
// behind a value that implements exactly the optional interfaces
// (store.AtomicCommitter, store.LedgerFinder, store.RunClaimer) of the
// wrapped store, so the runtime and the scheduler take the same paths as
// on the bare store.
type Counting struct {
	inner   store.Store
	ops     [numOps]atomic.Int64
	records atomic.Int64
	writes  atomic.Int64
	nanos   atomic.Int64 // time spent inside the workloads' store calls, when timed

	// Timed makes every call also add its duration to the store time
	// (two clock reads a call, ~75 ns a pair on this project's VM). The Go
	// benchmarks set it to report store-ns/op; the bench command leaves
	// it off, as Python's harness times bare stores.
	Timed bool
}

// Snapshot returns the counts so far.
func (c *Counting) Snapshot() Counts {
	var s Counts
	for i := range c.ops {
		s.Ops[i] = c.ops[i].Load()
	}
	s.RecordsAppended = c.records.Load()
	s.FileWrites = c.writes.Load()
	s.StoreTime = time.Duration(c.nanos.Load())
	return s
}

// Inner returns the wrapped store.
func (c *Counting) Inner() store.Store { return c.inner }

func (c *Counting) count(op Op) { c.ops[op].Add(1) }

// start returns the time a call starts, or the zero time when the calls
// are not timed.
func (c *Counting) start() time.Time {
	if !c.Timed {
		return time.Time{}
	}
	return time.Now()
}

// since adds the time since t0 to the store time (when timed).
func (c *Counting) since(t0 time.Time) {
	if !t0.IsZero() {
		c.nanos.Add(int64(time.Since(t0)))
	}
}

// Wrap returns a counting view of inner (see Counting) and the counter.
func Wrap(inner store.Store) (store.Store, *Counting) {
	c := &Counting{inner: inner}
	_, finder := inner.(store.LedgerFinder)
	_, claimer := inner.(store.RunClaimer)
	atomicCommit := store.IsAtomic(inner)
	switch {
	case atomicCommit && finder && claimer:
		return struct {
			*Counting
			atomicPart
			finderPart
			claimerPart
		}{c, atomicPart{}, finderPart{c}, claimerPart{c}}, c
	case atomicCommit && finder:
		return struct {
			*Counting
			atomicPart
			finderPart
		}{c, atomicPart{}, finderPart{c}}, c
	case atomicCommit && claimer:
		return struct {
			*Counting
			atomicPart
			claimerPart
		}{c, atomicPart{}, claimerPart{c}}, c
	case atomicCommit:
		return struct {
			*Counting
			atomicPart
		}{c, atomicPart{}}, c
	case finder && claimer:
		return struct {
			*Counting
			finderPart
			claimerPart
		}{c, finderPart{c}, claimerPart{c}}, c
	case finder:
		return struct {
			*Counting
			finderPart
		}{c, finderPart{c}}, c
	case claimer:
		return struct {
			*Counting
			claimerPart
		}{c, claimerPart{c}}, c
	}
	return c, c
}

type atomicPart struct{}

// AtomicCommit implements store.AtomicCommitter for atomic inner stores.
func (atomicPart) AtomicCommit() bool { return true }

type finderPart struct{ c *Counting }

// LedgerFindCompleted implements store.LedgerFinder.
func (f finderPart) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	f.c.count(OpLedgerFindCompleted)
	defer f.c.since(f.c.start())
	return f.c.inner.(store.LedgerFinder).LedgerFindCompleted(ctx, runID, key)
}

type claimerPart struct{ c *Counting }

// RunClaim implements store.RunClaimer.
func (p claimerPart) RunClaim(ctx context.Context, cp *store.RunClaimParams) error {
	p.c.count(OpRunClaim)
	return p.c.inner.(store.RunClaimer).RunClaim(ctx, cp)
}

// RunRelease implements store.RunClaimer.
func (p claimerPart) RunRelease(ctx context.Context, runID, owner string) error {
	p.c.count(OpRunRelease)
	return p.c.inner.(store.RunClaimer).RunRelease(ctx, runID, owner)
}

var _ store.Store = (*Counting)(nil)

// Close implements store.Store.
func (c *Counting) Close() error { return c.inner.Close() }

// RunCommit implements store.RunStore.
func (c *Counting) RunCommit(ctx context.Context, p *store.CommitParams) error {
	c.count(OpRunCommit)
	c.records.Add(int64(len(p.Records)))
	c.writes.Add(1)
	if len(p.Records) > 0 {
		c.writes.Add(1)
	}
	defer c.since(c.start())
	return c.inner.RunCommit(ctx, p)
}

// RunGet implements store.RunStore.
func (c *Counting) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	c.count(OpRunGet)
	defer c.since(c.start())
	return c.inner.RunGet(ctx, runID)
}

// RunList implements store.RunStore.
func (c *Counting) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	c.count(OpRunList)
	return c.inner.RunList(ctx, p)
}

// RunListDue implements store.RunStore.
func (c *Counting) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	c.count(OpRunListDue)
	defer c.since(c.start())
	return c.inner.RunListDue(ctx, p)
}

// RunNextDue implements store.RunStore.
func (c *Counting) RunNextDue(ctx context.Context) (durable.Time, error) {
	c.count(OpRunNextDue)
	return c.inner.RunNextDue(ctx)
}

// RunListChildren implements store.RunStore.
func (c *Counting) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	c.count(OpRunListChildren)
	return c.inner.RunListChildren(ctx, parentID, status)
}

// RunIndex implements store.RunStore.
func (c *Counting) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	c.count(OpRunIndex)
	return c.inner.RunIndex(ctx, p)
}

// RunDelete implements store.RunStore.
func (c *Counting) RunDelete(ctx context.Context, runID string) (bool, error) {
	c.count(OpRunDelete)
	return c.inner.RunDelete(ctx, runID)
}

// LedgerAppend implements store.LedgerStore.
func (c *Counting) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	c.count(OpLedgerAppend)
	c.records.Add(int64(len(records)))
	if len(records) > 0 {
		c.writes.Add(1)
	}
	defer c.since(c.start())
	return c.inner.LedgerAppend(ctx, runID, records)
}

// LedgerList implements store.LedgerStore.
func (c *Counting) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	c.count(OpLedgerList)
	defer c.since(c.start())
	return c.inner.LedgerList(ctx, p)
}

// LedgerCount implements store.LedgerStore.
func (c *Counting) LedgerCount(ctx context.Context, runID string) (int64, error) {
	c.count(OpLedgerCount)
	return c.inner.LedgerCount(ctx, runID)
}

// LedgerDelete implements store.LedgerStore.
func (c *Counting) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	c.count(OpLedgerDelete)
	return c.inner.LedgerDelete(ctx, runID)
}

// CommandAppend implements store.CommandStore.
func (c *Counting) CommandAppend(ctx context.Context, r *durable.CommandRecord) (durable.CommandAppendResult, error) {
	c.count(OpCommand)
	return c.inner.CommandAppend(ctx, r)
}

// CommandListAfter implements store.CommandStore.
func (c *Counting) CommandListAfter(ctx context.Context, after int64, limit int) ([]*durable.CommandRecord, int64, error) {
	c.count(OpCommand)
	return c.inner.CommandListAfter(ctx, after, limit)
}

// CommandLastSeq implements store.CommandStore.
func (c *Counting) CommandLastSeq(ctx context.Context) (int64, error) {
	c.count(OpCommand)
	return c.inner.CommandLastSeq(ctx)
}

// CommandDeleteByRun implements store.CommandStore.
func (c *Counting) CommandDeleteByRun(ctx context.Context, runID string) (int, error) {
	c.count(OpCommand)
	return c.inner.CommandDeleteByRun(ctx, runID)
}

// CursorLoad implements store.CommandStore.
func (c *Counting) CursorLoad(ctx context.Context, consumer string) (int64, error) {
	c.count(OpCommand)
	return c.inner.CursorLoad(ctx, consumer)
}

// CursorSave implements store.CommandStore.
func (c *Counting) CursorSave(ctx context.Context, consumer string, cursor int64) error {
	c.count(OpCommand)
	return c.inner.CursorSave(ctx, consumer, cursor)
}
