// Package store defines the persistence seam of the runtime: the Store
// interface every backend implements (memory, JSON files, SQLite,
// PostgreSQL), its parameter types and its sentinel errors. It does no I/O.
//
// The central write is RunCommit: one call appends a step's ledger records
// and saves the run's new state, guarded by the version the caller read.
// Backends that can do both in one transaction say so through
// AtomicCommitter; the others append the records first, so the ledger is
// never behind the state.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// Sentinel errors. Every backend translates its driver's errors into these
// so callers can test them with errors.Is.
var (
	// ErrNotFound: the run (or command, cursor…) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the run changed since the caller read it (stale
	// version), or another runner holds its claim.
	ErrConflict = errors.New("version conflict")
	// ErrAlreadyExists: a create found the run already there.
	ErrAlreadyExists = errors.New("already exists")
	// ErrInvalidID: the store cannot hold a run under this id (a file
	// name it cannot make, a key past the database's limit). It is an
	// answer, not an outage: the same id is refused every time.
	ErrInvalidID = errors.New("invalid id")
)

// Store is the complete persistence a runtime needs.
type Store interface {
	RunStore
	LedgerStore
	CommandStore
	// Close releases the store's resources. It is safe to call twice.
	Close() error
}

// RunStore persists run states and answers the queries the scheduler,
// event delivery and the gateway need.
type RunStore interface {
	// RunCommit appends p.Records to the ledger of p.Run and saves p.Run,
	// as one atomic step where the backend can (see AtomicCommitter) and
	// otherwise records first. The stored version must equal
	// p.Run.Version (0 with p.Create); on success p.Run.Version is
	// incremented and each record's Seq is set. A stale version returns
	// ErrConflict and writes nothing; a create of an existing run returns
	// ErrAlreadyExists. A run's created_at is set by its create: a commit
	// that changes it (the runtime never does) stores the run as given,
	// but the SQLite and PostgreSQL stores' index and child order keep the
	// first value, as Python's save replaces every column but created_at.
	RunCommit(ctx context.Context, p *CommitParams) error
	// RunGet loads a run (a private copy the caller may mutate). Unknown
	// ids return ErrNotFound.
	RunGet(ctx context.Context, runID string) (*durable.RunState, error)
	// RunList returns runs matching every given filter, most recently
	// updated first.
	RunList(ctx context.Context, p *RunListParams) ([]*durable.RunState, error)
	// RunListDue returns waiting runs whose deadline (WAIT_UNTIL, or a
	// WAIT_EVENT timeout) is at or before p.Now, earliest first. Backends
	// answer it from an index, never by scanning every run.
	RunListDue(ctx context.Context, p *RunListDueParams) ([]DueRun, error)
	// RunNextDue returns the earliest deadline of any waiting run, or the
	// zero Time when none has one.
	RunNextDue(ctx context.Context) (durable.Time, error)
	// RunListChildren returns the runs whose parent is parentID, oldest
	// first; status "" means any.
	RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error)
	// RunIndex returns lightweight rows, most recently updated first (the
	// total order RunIndexCursor describes).
	RunIndex(ctx context.Context, p *RunIndexParams) ([]RunIndexRow, error)
	// RunDelete removes a run (not its ledger); it reports whether the
	// run existed.
	RunDelete(ctx context.Context, runID string) (bool, error)
}

// CommitParams is the input of RunCommit.
type CommitParams struct {
	Run     *durable.RunState
	Create  bool
	Records []*durable.StepRecord
	// RandomID tells, with Create, that the caller has just generated
	// Run.RunID at random (a UUID4): no run or ledger can have it yet, so
	// a store may skip looking for one. A store that does look still
	// returns ErrAlreadyExists. Setting it for an id that is not new breaks
	// the contract and is not recovered from: the SQLite store refuses it
	// while the run is in its cache or redo log, but past that it may
	// queue the create and then fail every later write when applying it.
	// The runtime sets it only for the UUID4s it draws itself.
	RandomID bool
	// Handoff tells that the caller gives Run to the store: after a commit
	// that succeeds, it neither reads nor changes Run again, and Run's
	// values already have the Go types a read of the run gives back
	// (pyjson.IsNormalized holds for its vars, and for its output when it
	// has one; its times are UTC to the microsecond). A store may
	// then return that very object, once, from the next RunGet of the run
	// instead of decoding or copying what it stored, provided no write to
	// the run came between. The runtime sets it for the run Start creates,
	// which a Tick usually reads next. Stores may ignore it; a wrapper
	// that passes it on reads what it needs of Run before the commit.
	Handoff bool
}

// RunListParams filters RunList. Zero fields do not filter.
type RunListParams struct {
	Status     durable.RunStatus
	WaitReason durable.WaitReason
	WorkflowID string
	SessionID  string
	ParentID   string
	// ActorID keeps the runs whose actor_id is exactly this one ("" means
	// any actor). It filters before Limit applies.
	ActorID string
	// WaitKeys keeps waiting runs whose wait key is one of these.
	WaitKeys []string
	// Limit caps the result; 0 means DefaultListLimit, negative means 1.
	Limit int
}

// DefaultListLimit is the row cap of list queries given no limit.
const DefaultListLimit = 100

// EffectiveLimit applies the limit rules shared by every backend.
func EffectiveLimit(limit int) int {
	switch {
	case limit == 0:
		return DefaultListLimit
	case limit < 0:
		return 1
	}
	return limit
}

// RunListDueParams is the input of RunListDue.
type RunListDueParams struct {
	Now   time.Time
	Limit int // 0 means DefaultListLimit
}

// DueRun is one run whose wait deadline has passed.
type DueRun struct {
	RunID string
	Until durable.Time
}

// RunIndexParams filters RunIndex.
type RunIndexParams struct {
	Status     durable.RunStatus
	WorkflowID string
	// SessionID is trimmed, as Python's stores trim it. The in-memory and
	// JSON stores compare it with the trimmed stored session id (Matches),
	// the SQL stores with the stored one as written, each as its Python
	// counterpart does; runtime.Start stores session ids trimmed.
	SessionID string
	RootOnly  bool // only runs without a parent
	// ExcludeWorkflowPrefix leaves out the runs whose workflow id starts
	// with this prefix, compared byte for byte (every character is
	// literal: no pattern); "" excludes nothing. The gateway passes "__"
	// to leave out internal runs. It filters before Limit applies, so a
	// page holds Limit runs that are not excluded when there are that
	// many.
	ExcludeWorkflowPrefix string
	// ActorID keeps the runs whose actor_id is exactly this one ("" means
	// any actor). It filters before Limit applies.
	ActorID string
	// Before, when not nil, keeps only the rows that come strictly after
	// it in the listing order (see RunIndexCursor): the next page of a
	// listing whose last row was Before. It applies before Limit.
	Before *RunIndexCursor
	Limit  int // 0 means DefaultListLimit
}

// RunIndexCursor is a position in the order RunIndex lists rows in, for
// keyset paging: a listing given RunIndexParams.Before returns only the
// rows after this position, so passing the UpdatedAt and RunID of the last
// row of each page as the next page's cursor (same filters) returns every
// run exactly once, as long as runs are not changed meanwhile (a run
// committed between two pages moves to the front, and one deleted is not
// listed).
//
// The order is total and the same in every backend: updated_at
// descending (as stored: UTC to the microsecond), then run_id descending
// (byte order); runs without an updated_at come last, by run_id
// descending. UpdatedAt is read to the microsecond, as stored, and a
// zero UpdatedAt stands for "no updated_at". A row is after the cursor
// when its updated_at is earlier, or equal with a smaller run_id. The
// cursor's run need not exist any more. The SQLite store compares the
// stored updated_at text with the cursor's in the form it writes
// (durable.FormatTime, Python's isoformat in UTC): a row Python wrote with
// an updated_at in another form (not UTC, or unreadable) is ordered, and
// paged, by its text.
type RunIndexCursor struct {
	// UpdatedAt is the updated_at of the last row seen (its
	// RunIndexRow.UpdatedAt).
	UpdatedAt durable.Time
	// RunID is the run id of the last row seen.
	RunID string
}

// CursorOf returns the cursor that continues a listing after row.
func CursorOf(row *RunIndexRow) *RunIndexCursor {
	return &RunIndexCursor{UpdatedAt: row.UpdatedAt, RunID: row.RunID}
}

// After reports whether a row with the given updated_at and run id comes
// strictly after c in the listing order.
func (c *RunIndexCursor) After(updatedAt durable.Time, runID string) bool {
	cu, ru := durable.NewTime(c.UpdatedAt.Time), durable.NewTime(updatedAt.Time)
	if d := ru.Compare(cu.Time); d != 0 {
		return d < 0
	}
	return runID < c.RunID
}

// RunIndexRow is a lightweight listing row.
type RunIndexRow struct {
	RunID        string
	WorkflowID   string
	Status       durable.RunStatus
	WaitReason   durable.WaitReason
	WaitUntil    durable.Time
	ParentRunID  string
	ActorID      string
	SessionID    string
	CreatedAt    durable.Time
	UpdatedAt    durable.Time
	RunLifecycle map[string]any // sanitised vars._run_lifecycle, or nil
}

// LedgerStore is the append-only journal of each run.
type LedgerStore interface {
	// LedgerAppend appends records to a run's ledger (outside a state
	// commit) and sets their Seq.
	LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error
	// LedgerList returns the records of a run with Seq > p.After in
	// append order, at most p.Limit of them (0 = all).
	LedgerList(ctx context.Context, p *LedgerListParams) ([]*durable.StepRecord, error)
	// LedgerCount returns the number of records of a run.
	LedgerCount(ctx context.Context, runID string) (int64, error)
	// LedgerDelete removes a run's ledger and returns how many records
	// it held.
	LedgerDelete(ctx context.Context, runID string) (int64, error)
}

// LedgerListParams is the input of LedgerList.
type LedgerListParams struct {
	RunID string
	After int64 // cursor: the last Seq the caller has seen
	Limit int   // 0 means no limit
}

// CommandStore is the durable inbox of control-plane commands, read by a
// consumer through a cursor.
type CommandStore interface {
	// CommandAppend stores a command once per CommandID (a random id is
	// assigned when empty); a duplicate returns the original seq.
	CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error)
	// CommandListAfter returns commands with seq > after in seq order and
	// the cursor to continue from.
	CommandListAfter(ctx context.Context, after int64, limit int) ([]*durable.CommandRecord, int64, error)
	// CommandLastSeq returns the highest seq, or 0.
	CommandLastSeq(ctx context.Context) (int64, error)
	// CommandDeleteByRun removes every command of a run.
	CommandDeleteByRun(ctx context.Context, runID string) (int, error)
	// CursorLoad returns a consumer's saved cursor (0 when none).
	CursorLoad(ctx context.Context, consumer string) (int64, error)
	// CursorSave stores a consumer's cursor.
	CursorSave(ctx context.Context, consumer string, cursor int64) error
}

// DefaultConsumer is the cursor name the gateway runner uses.
const DefaultConsumer = "gateway_runner"

// AtomicCommitter is implemented by backends whose RunCommit writes the
// records and the state in one transaction. The kernel skips its replay
// checks (ledger look-ups before effects and terminal records) on them:
// a record can never be durable without the state that follows it.
type AtomicCommitter interface {
	AtomicCommit() bool
}

// IsAtomic reports whether s commits records and state atomically.
func IsAtomic(s any) bool {
	a, ok := s.(AtomicCommitter)
	return ok && a.AtomicCommit()
}

// CopyingWriter is implemented by wrappers that store copies of the
// records they are given, changed (store/offload puts refs in place of
// large values): the variants return the records as stored, with the seq
// and hashes the stores inside set, and leave the caller's records as they
// were but for Seq and hashes. A wrapper that shows records to others
// (store/observe) shows these, whose hashes verify.
type CopyingWriter interface {
	RunCommitStored(ctx context.Context, p *CommitParams) ([]*durable.StepRecord, error)
	LedgerAppendStored(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error)
}

// CommitStored commits through st and returns the records as stored: st's
// RunCommitStored when it is a CopyingWriter, else p.Records. For
// decorators that pass the stored records on.
func CommitStored(ctx context.Context, st RunStore, p *CommitParams) ([]*durable.StepRecord, error) {
	if cw, ok := st.(CopyingWriter); ok {
		return cw.RunCommitStored(ctx, p)
	}
	return p.Records, st.RunCommit(ctx, p)
}

// AppendStored is CommitStored for LedgerAppend.
func AppendStored(ctx context.Context, st LedgerStore, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error) {
	if cw, ok := st.(CopyingWriter); ok {
		return cw.LedgerAppendStored(ctx, runID, records)
	}
	return records, st.LedgerAppend(ctx, runID, records)
}

// LedgerFinder is an optional fast path: the first completed record of a
// run carrying an idempotency key, or nil (always for an empty key).
type LedgerFinder interface {
	LedgerFindCompleted(ctx context.Context, runID, idempotencyKey string) (*durable.StepRecord, error)
}

// RunClaimer is implemented by stores shared by several runner processes:
// a runner claims a run before ticking it, and the claim expires after
// TTL unless renewed, so a dead runner's runs are picked up again. A
// claim's id need not name a run: a host leases what one runner at a time
// may do under a reserved id (a gateway's command consumer), and no run
// is created for it.
type RunClaimer interface {
	// RunClaim takes or renews the claim; ErrConflict if another owner
	// holds a live claim, unless p.Force.
	RunClaim(ctx context.Context, p *RunClaimParams) error
	// RunRelease drops the claim if owner holds it.
	RunRelease(ctx context.Context, runID, owner string) error
}

// LedgerListener is implemented by stores that several processes share
// and that can tell one of them when another appended to a ledger
// (PostgreSQL: LISTEN/NOTIFY; a SQLite store opened shared: a poll of the
// ledger every sqlite.Config.ListenEvery), so that a follower in one process (a
// gateway streaming a run's ledger) learns at once what a runner in
// another wrote. store/observe turns these wake-ups into events.
type LedgerListener interface {
	// ListenLedger calls wake with the run id of each append another
	// store value made, once it committed, until ctx ends (it returns
	// ctx's error) or the listening fails. A delete of a run's ledger by
	// another store value is reported with deleted set: the ledger grows
	// again from seq 1, below a follower's cursor. An empty run id stands
	// for any run: without deleted, appends it cannot name (read from the
	// cursor); with deleted, deletes it cannot name (any ledger may have
	// been deleted: read each from seq 1). It calls ready once it listens;
	// changes made before are not reported: a follower reads from its
	// cursor after ready. A caller that listens again after a call failed
	// cannot know what was deleted meanwhile, and treats every ledger as
	// possibly deleted (observe.Follow sends Deleted with an empty run id).
	ListenLedger(ctx context.Context, ready func(), wake func(runID string, deleted bool)) error
}

// RunClaimParams is the input of RunClaim.
type RunClaimParams struct {
	RunID string
	Owner string
	TTL   time.Duration
	// Now is the time expiry is judged by. Zero means the store's own
	// clock: the database server's for a store shared across machines,
	// so runners whose clocks drift still agree on when a claim expires.
	Now time.Time
	// Force takes the claim even from another owner's live claim (a
	// cancel made through a runner that does not hold the run). The
	// owner that lost it learns so at its next renewal (ErrConflict).
	Force bool
	// From, with Force, takes the claim from that owner only: a runner
	// taking over a run it saw idle under From (a runner that died
	// holding it) must not take it from another runner that took it over
	// first. A live claim of any other owner is then a ClaimHeldError.
	From string
	// Renew only extends a claim p.Owner holds: ErrConflict when another
	// owner holds it or there is none any more (another owner took it
	// and released it), so a runner never takes back a run it lost.
	Renew bool
}

// ClaimHeldError is the ErrConflict of a claim refused because another
// owner holds the run: Owner names it.
type ClaimHeldError struct {
	RunID string
	Owner string
}

func (e *ClaimHeldError) Error() string {
	return fmt.Sprintf("run %s is claimed by %s", e.RunID, e.Owner)
}

// Is makes a ClaimHeldError an ErrConflict.
func (e *ClaimHeldError) Is(target error) bool { return target == ErrConflict }

// FindCompleted returns the first completed record of a run carrying an
// idempotency key, through the store's LedgerFinder fast path when it has
// one and by reading the ledger otherwise; nil when there is none. An
// empty key names no effect: nil, whatever the store (a record without a
// key is not found by one).
func FindCompleted(ctx context.Context, s LedgerStore, runID, key string) (*durable.StepRecord, error) {
	if key == "" {
		return nil, nil
	}
	if f, ok := s.(LedgerFinder); ok {
		return f.LedgerFindCompleted(ctx, runID, key)
	}
	recs, err := s.LedgerList(ctx, &LedgerListParams{RunID: runID})
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Status == durable.StepCompleted && r.IdempotencyKey == key {
			return r, nil
		}
	}
	return nil, nil
}
