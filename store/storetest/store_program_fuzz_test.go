package storetest_test

// FuzzStoreProgram: a model-based differential of the raw store API. The
// fuzz input decodes into a short program (at most fzMaxOps calls) of
// RunCommit (creates and updates, right and wrong versions), RunGet,
// RunDelete, ledger appends/lists/counts/deletes, FindCompleted, command
// appends/listings/deletes, cursors, claims and releases, and the
// listings (RunList, RunListDue/RunNextDue, RunListChildren, RunIndex
// with every filter, and RunIndex paged with cursors to the end) over a
// small pool of run ids (odd ones too: empty, padded, with '/', '%' or
// '\', unicode, long, not UTF-8). The same program runs on fresh stores of
// every backend, and:
//
//   - every answer (values, and errors by class: the store sentinel they
//     wrap) equals the in-memory store's (the reference, as in
//     differential_test.go);
//   - paging RunIndex with RunIndexCursor yields every run of the
//     one-page listing exactly once, in the documented total order, each
//     row matching the filters;
//   - after the program, closing and reopening the file-backed stores
//     gives the same answers (nothing durable is lost);
//   - no goroutine outlives the stores.
//
// Documented backend differences the target normalises (each also noted
// where it is done):
//
//   - the JSON-file store cannot hold a run whose id is empty, holds '/',
//     '\' or NUL, is "." or "..", is not UTF-8, or is too long for its
//     create's temp file name (store/jsonfile checkID/checkRunID,
//     runs.go), nor a cursor of such a consumer: it is compared with a
//     memory store wrapped to refuse exactly those (fzJSONShape);
//   - run versions of the JSON-file store live in process: a run found
//     at open is at version 1 (jsonfile package doc), so versions are left
//     out of its answers after a reopen;
//   - CommandLastSeq of the in-memory store stays the counter after
//     deletes (docs/compatibility.md, command inbox): the target reads the
//     highest stored seq from the listing there;
//   - padded stored session and parent ids are matched differently by
//     the session and root-only index filters (docs/compatibility.md,
//     "Session ids are stored trimmed"): the program stores none (a
//     padded session filter is still used);
//   - the JSON-file store has no claims (not a store.RunClaimer);
//   - the SQLite store keeps a run's created_at column as written at its
//     creation, as Python's runs.save does (runtime-model.md: "on conflict
//     every column except created_at is replaced"), so a commit that
//     changes created_at (the runtime never does) shows the new one in
//     RunGet and the old one in RunIndex and RunListChildren's order:
//     commits keep the created_at of the run's creation.
//
// Backends per input: memory, the JSON-file reference (fzJSONShape),
// jsonfile (default and CacheBytes 1), sqlite (default, CacheBytes -1,
// Shared) and postgres (a schema of its own) when TEST_POSTGRES_URL is
// set; about 0.15 s an input without PostgreSQL, 0.4 s with it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

const fzMaxOps = 30

// fzDebug logs every op and its reference answers (FZ_DEBUG=1).
var fzDebug = os.Getenv("FZ_DEBUG") != ""

var fzT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	fzIDs = []string{"r1", "r2", "r3", "a/b", "x%2Fy", "ünï🙂", strings.Repeat("L", 120),
		strings.Repeat("M", 210), "", " r1 ", "..", `r\1`, "bad\xff", "r1/..", "%00"}
	fzParents   = []string{"", "r1", "r2", "a/b", "ghost", "ünï🙂"}
	fzWorkflows = []string{"wf", "wf2", "__int", "_x", "wf%"}
	fzSessions  = []string{"", "s1", "s2"}
	fzActors    = []string{"", "u1", "u2"}
	fzKeys      = []string{"k1", "k2", "k3", ""}
	fzOffsets   = []time.Duration{0, time.Second, 2 * time.Second, time.Second + time.Microsecond, -time.Hour, 10 * time.Second, 500 * time.Nanosecond, 3 * time.Hour}
	fzCmdIDs    = []string{"c1", "c2", " c1 ", "c3", ""}
	fzCmdTypes  = []string{"pause", "resume", "cancel", "emit_event", "", " pause "}
	fzConsumers = []string{store.DefaultConsumer, "c2", "", "a/b"}
	fzStepSt    = []durable.StepStatus{durable.StepStarted, durable.StepCompleted, durable.StepWaiting, durable.StepFailed, durable.StepCancelled}
	fzStatuses  = []durable.RunStatus{"", durable.RunRunning, durable.RunWaiting, durable.RunCompleted, durable.RunFailed, durable.RunCancelled}
	fzReasons   = []durable.WaitReason{"", durable.WaitUntil, durable.WaitEvent, durable.WaitUser, durable.WaitJob, durable.WaitSubworkflow}
)

// fzReader hands out the program's bytes, zeros once they run out.
type fzReader struct {
	b []byte
	i int
}

func (r *fzReader) next() byte {
	if r.i >= len(r.b) {
		r.i++
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *fzReader) done() bool { return r.i >= len(r.b) }

func fzPick[T any](r *fzReader, xs []T) T { return xs[int(r.next())%len(xs)] }

// fzTime is the time of offset byte b: mostly normalised, sometimes a raw
// time with nanoseconds in another zone (stores keep UTC microseconds),
// sometimes no time at all.
func fzTime(b byte) durable.Time {
	off := fzOffsets[int(b)%len(fzOffsets)]
	switch b >> 5 {
	case 6:
		return durable.Time{Time: fzT0.Add(off).Add(700 * time.Nanosecond).In(time.FixedZone("x", 2*3600))}
	case 7:
		if b&1 == 1 {
			return durable.Time{}
		}
	}
	return durable.NewTime(fzT0.Add(off))
}

// fzRunSpec is a run as the program describes it.
type fzRunSpec struct {
	id, wf, session, actor, parent string
	kind, deadline, created, upd   byte
	lifecycle                      bool
}

func fzDeadline(b byte) durable.Time {
	switch b % 6 {
	case 0:
		return durable.NewTime(fzT0.Add(-10 * time.Second))
	case 1:
		return durable.NewTime(fzT0)
	case 2:
		return durable.NewTime(fzT0.Add(5 * time.Second))
	case 3:
		return durable.NewTime(fzT0.Add(time.Hour))
	case 4:
		return durable.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC))
	}
	return durable.Time{Time: fzT0.Add(5*time.Second + 300*time.Nanosecond)}
}

func (s fzRunSpec) build() *durable.RunState {
	r := &durable.RunState{RunID: s.id, WorkflowID: s.wf, Status: durable.RunRunning, CurrentNode: "n",
		Vars:      map[string]any{"k": int(s.kind)},
		CreatedAt: fzTime(s.created), UpdatedAt: fzTime(s.upd),
		SessionID: s.session, ActorID: s.actor, ParentRunID: s.parent}
	if s.lifecycle {
		r.Vars[store.RunLifecycleKey] = map[string]any{"source": "ui", "purpose": " p ", "retention": map[string]any{"mode": "ttl", "ttl_s": 60}}
	}
	wait := func(reason durable.WaitReason, key string, until bool) {
		r.Status = durable.RunWaiting
		r.Waiting = &durable.WaitState{Reason: reason, WaitKey: key, ResumeToNode: "next", ResultKey: "res", AllowFreeText: true}
		if until {
			r.Waiting.Until = fzDeadline(s.deadline)
		}
	}
	key := fzKeys[int(s.deadline>>3)%len(fzKeys)]
	switch s.kind % 13 {
	case 0:
	case 1:
		wait(durable.WaitUntil, "", true)
	case 2:
		wait(durable.WaitEvent, key, false)
	case 3:
		wait(durable.WaitEvent, key, true)
	case 4:
		wait(durable.WaitUser, key, true) // a user wait's until is no deadline
	case 5:
		wait(durable.WaitJob, key, false)
	case 6:
		wait(durable.WaitSubworkflow, "sub:"+key, s.deadline&1 == 1)
	case 7:
		r.Status = durable.RunCompleted
		r.Output = map[string]any{"answer": 42, "s": "ok"}
	case 8:
		r.Status, r.Error = durable.RunFailed, "boom"
	case 9:
		r.Status, r.Error = durable.RunCancelled, "cancelled"
	case 10: // a host-paused deadline wait: not due
		wait(durable.WaitUntil, "", true)
		r.Vars["_runtime"] = map[string]any{"control": map[string]any{"paused": s.deadline&1 == 1}}
	case 11: // waiting without a wait state
		r.Status = durable.RunWaiting
	case 12: // an unknown status, or an unknown wait reason: every store refuses it
		if s.deadline&1 == 1 {
			r.Status = "bogus"
		} else {
			wait("nap", key, true)
		}
	}
	return r
}

func fzSpec(rd *fzReader, id string) fzRunSpec {
	b := rd.next()
	return fzRunSpec{id: id, wf: fzWorkflows[int(b)%len(fzWorkflows)], session: fzSessions[int(b>>3)%len(fzSessions)],
		actor: fzActors[int(b>>5)%len(fzActors)], parent: fzPick(rd, fzParents),
		kind: rd.next(), deadline: rd.next(), created: rd.next(), upd: rd.next(), lifecycle: b&0x80 != 0}
}

func fzRecords(rd *fzReader, id string) []*durable.StepRecord {
	b := rd.next()
	n := int(b % 4)
	var out []*durable.StepRecord
	for i := 0; i < n; i++ {
		c := rd.next()
		rec := &durable.StepRecord{RunID: id, StepID: fmt.Sprintf("s%d", c), NodeID: "n", Status: fzStepSt[int(c)%len(fzStepSt)],
			StartedAt: fzTime(c >> 2), Attempt: 1 + int(c>>6),
			IdempotencyKey: []string{"", "k-a", "k-b"}[int(c>>3)%3]}
		if c&0x20 == 0 {
			rec.Effect = &durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"n": int(c)}, ResultKey: "_temp.x"}
		}
		if rec.Status == durable.StepCompleted {
			rec.Result = map[string]any{"v": int(c), "l": []any{1, "x"}}
			rec.EndedAt = fzTime(c)
		}
		if rec.Status == durable.StepFailed {
			rec.Error = "e"
		}
		out = append(out, rec)
	}
	return out
}

// fzErr names err by its class (errClassOf), never by its text.
func fzErr(err error) string {
	if c, ok := errClassOf(err); ok {
		return c
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return "timeout(" + err.Error() + ")"
	}
	return "err"
}

func fzRunText(r *durable.RunState, withVersion bool) string {
	b, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		return "marshal-error"
	}
	if withVersion {
		return fmt.Sprintf("v%d %s", r.Version, b)
	}
	return string(b)
}

func fzRecText(r *durable.StepRecord) string {
	b, err := durable.MarshalRecord(r, pyjson.Line)
	if err != nil {
		return "marshal-error"
	}
	return fmt.Sprintf("#%d %s", r.Seq, b)
}

func fzRowText(r store.RunIndexRow) string {
	return fmt.Sprintf("{%q wf=%q %s %s until=%s parent=%q actor=%q session=%q c=%s u=%s lc=%v}", r.RunID, r.WorkflowID, r.Status,
		r.WaitReason, r.WaitUntil, r.ParentRunID, r.ActorID, r.SessionID, r.CreatedAt, r.UpdatedAt, r.RunLifecycle)
}

func fzCmdText(c *durable.CommandRecord) string {
	id := c.CommandID
	if !slices.Contains(fzCmdIDs, id) {
		id = "<random>"
	}
	return fmt.Sprintf("{#%d %q %q %q ts=%q client=%q %v}", c.Seq, id, c.RunID, c.Type, c.TSString(), c.ClientID, c.Payload)
}

// fzJSONShape is the reference of the JSON-file store: a memory store
// that refuses, with store.ErrInvalidID, the ids the JSON-file store
// documents it cannot hold (checkRunID, the create temp-name bound of
// runs.go, checkID for consumers). It hides memory's claims, which the
// JSON-file store does not have.
type fzJSONShape struct{ store.Store }

func fzJSONRefuses(id string) bool {
	return id == "" || strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." || !utf8.ValidString(id)
}

func (s fzJSONShape) RunCommit(ctx context.Context, p *store.CommitParams) error {
	// In the JSON-file store's order: the id, the run's readability, then
	// the create's temp file name.
	if p.Run != nil && (fzJSONRefuses(p.Run.RunID) || p.Create && store.CheckRunReadable(p.Run) == nil && len(p.Run.RunID)+len("run_.json.")+32+len(".tmp") > 255) {
		return fmt.Errorf("jsonshape: %w", store.ErrInvalidID)
	}
	return s.Store.RunCommit(ctx, p)
}

func (s fzJSONShape) LedgerAppend(ctx context.Context, runID string, recs []*durable.StepRecord) error {
	if fzJSONRefuses(runID) {
		return fmt.Errorf("jsonshape: %w", store.ErrInvalidID)
	}
	return s.Store.LedgerAppend(ctx, runID, recs)
}

func (s fzJSONShape) CursorLoad(ctx context.Context, consumer string) (int64, error) {
	if consumer == "" || strings.ContainsAny(consumer, "/\\\x00") || consumer == "." || consumer == ".." {
		return 0, fmt.Errorf("jsonshape: %w", store.ErrInvalidID)
	}
	return s.Store.CursorLoad(ctx, consumer)
}

func (s fzJSONShape) CursorSave(ctx context.Context, consumer string, c int64) error {
	if consumer == "" || strings.ContainsAny(consumer, "/\\\x00") || consumer == "." || consumer == ".." {
		return fmt.Errorf("jsonshape: %w", store.ErrInvalidID)
	}
	return s.Store.CursorSave(ctx, consumer, c)
}

// fzBackend is one store under test and the client's view of it.
type fzBackend struct {
	name   string
	ref    string // the reference it is compared with
	st     store.Store
	reopen func() (store.Store, error) // nil: not file-backed
	memory bool                        // CommandLastSeq is the counter (normalised)
	noVer  bool                        // versions left out (JSON files after a reopen)
	ver    map[string]int64            // the version the client last saw of each run
}

var fzSchemaN int

func fzBackends(t *testing.T, ctx context.Context) []*fzBackend {
	t.Helper()
	var bs []*fzBackend
	add := func(b *fzBackend, err error) {
		if err != nil {
			t.Fatalf("open %s: %v", b.name, err)
		}
		b.ver = map[string]int64{}
		bs = append(bs, b)
	}
	add(&fzBackend{name: "memory", ref: "memory", st: memory.New(), memory: true}, nil)
	add(&fzBackend{name: "jsonshape", ref: "jsonshape", st: fzJSONShape{memory.New()}, memory: true}, nil)
	dir := t.TempDir()
	jcfg := jsonfile.Config{Dir: dir, NoSync: true}
	js, err := jsonfile.New(jcfg)
	add(&fzBackend{name: "jsonfile", ref: "jsonshape", st: js, reopen: func() (store.Store, error) { return jsonfile.New(jcfg) }}, err)
	tcfg := jsonfile.Config{Dir: t.TempDir(), NoSync: true, CacheBytes: 1}
	js, err = jsonfile.New(tcfg)
	add(&fzBackend{name: "jsonfile-tiny-cache", ref: "jsonshape", st: js, reopen: func() (store.Store, error) { return jsonfile.New(tcfg) }}, err)
	for _, c := range []struct {
		name string
		cfg  sqlite.Config
	}{
		{"sqlite", sqlite.Config{}},
		{"sqlite-no-cache", sqlite.Config{CacheBytes: -1}},
		{"sqlite-shared", sqlite.Config{Shared: true}},
	} {
		cfg := c.cfg
		cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
		sq, err := sqlite.New(ctx, cfg)
		add(&fzBackend{name: c.name, ref: "memory", st: sq, reopen: func() (store.Store, error) { return sqlite.New(ctx, cfg) }}, err)
	}
	if url := os.Getenv("TEST_POSTGRES_URL"); url != "" {
		fzSchemaN++
		schema := fmt.Sprintf("agw_fzprog_%d_%d", os.Getpid(), fzSchemaN)
		cfg := postgres.Config{URL: url, Schema: schema, MaxConns: 2}
		pg, err := postgres.New(ctx, cfg)
		t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
		add(&fzBackend{name: "postgres", ref: "memory", st: pg, reopen: func() (store.Store, error) { return postgres.New(ctx, cfg) }}, err)
	}
	return bs
}

// fzCompare fails t when a backend's answer differs from its reference's.
func fzCompare(t *testing.T, bs []*fzBackend, what string, got map[string]string) {
	t.Helper()
	groups := map[string]map[string]string{}
	for _, b := range bs {
		if groups[b.ref] == nil {
			groups[b.ref] = map[string]string{"memory": got[b.ref]}
		}
		if b.name != b.ref {
			groups[b.ref][b.name] = got[b.name]
		}
	}
	for ref, m := range groups {
		reportDiffering(t, what+" (reference "+ref+")", m)
	}
}

func fzAnswers(bs []*fzBackend, f func(b *fzBackend) string) map[string]string {
	out := map[string]string{}
	for _, b := range bs {
		out[b.name] = f(b)
	}
	return out
}

// fzIndexAll pages through RunIndex with p's filters, pages of size, and
// checks the paging properties against one listing of every row.
func fzIndexAll(t *testing.T, ctx context.Context, b *fzBackend, p store.RunIndexParams, size int) string {
	p.Before, p.Limit = nil, 10000
	all, err := b.st.RunIndex(ctx, &p)
	if err != nil {
		return "all:" + fzErr(err)
	}
	var sb strings.Builder
	for i, r := range all {
		if !p.Matches(&r) {
			t.Errorf("%s: RunIndex(%+v) row %s does not match its filters", b.name, p, fzRowText(r))
		}
		if i > 0 && !store.CursorOf(&all[i-1]).After(r.UpdatedAt, r.RunID) {
			t.Errorf("%s: RunIndex(%+v) row %d %s is not after row %d %s in the documented order", b.name, p, i, fzRowText(r), i-1, fzRowText(all[i-1]))
		}
		sb.WriteString(fzRowText(r))
	}
	var paged []store.RunIndexRow
	p.Limit = size
	for pages := 0; ; pages++ {
		if pages > len(all)+2 {
			t.Errorf("%s: RunIndex paging (%+v, pages of %d) does not end: %d rows after %d pages, %d rows in all", b.name, p, size, len(paged), pages, len(all))
			break
		}
		rows, err := b.st.RunIndex(ctx, &p)
		if err != nil {
			return "page:" + fzErr(err)
		}
		if len(rows) > size {
			t.Errorf("%s: RunIndex page of %d rows past its limit %d", b.name, len(rows), size)
		}
		if len(rows) == 0 {
			break
		}
		paged = append(paged, rows...)
		p.Before = store.CursorOf(&rows[len(rows)-1])
	}
	if len(paged) != len(all) {
		t.Errorf("%s: paging RunIndex by %d gave %d rows, one listing %d", b.name, size, len(paged), len(all))
	}
	for i := range min(len(paged), len(all)) {
		if a, c := fzRowText(paged[i]), fzRowText(all[i]); a != c {
			t.Errorf("%s: paging RunIndex by %d: row %d is %s, the one listing has %s", b.name, size, i, a, c)
			break
		}
	}
	return sb.String()
}

// fzSnapshot is every answer the stores' durable state gives.
func fzSnapshot(t *testing.T, ctx context.Context, b *fzBackend) string {
	var sb strings.Builder
	withVer := !b.noVer
	for _, id := range fzIDs {
		r, err := b.st.RunGet(ctx, id)
		if err == nil {
			fmt.Fprintf(&sb, "run %q: %s\n", id, fzRunText(r, withVer))
		} else {
			fmt.Fprintf(&sb, "run %q: %s\n", id, fzErr(err))
		}
		recs, err := b.st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		fmt.Fprintf(&sb, "ledger %q: %s", id, fzErr(err))
		for _, r := range recs {
			sb.WriteString(" " + fzRecText(r))
		}
		n, err := b.st.LedgerCount(ctx, id)
		fmt.Fprintf(&sb, "\ncount %d %s\n", n, fzErr(err))
	}
	runs, err := b.st.RunList(ctx, &store.RunListParams{Limit: 1000})
	fmt.Fprintf(&sb, "list %s:", fzErr(err))
	for _, r := range runs {
		sb.WriteString(" " + fzRunText(r, withVer))
	}
	sb.WriteString("\nindex " + fzIndexAll(t, ctx, b, store.RunIndexParams{}, 2))
	due, err := b.st.RunListDue(ctx, &store.RunListDueParams{Now: fzT0.AddDate(9000, 0, 0), Limit: 1000})
	fmt.Fprintf(&sb, "\ndue %s %v", fzErr(err), due)
	next, err := b.st.RunNextDue(ctx)
	fmt.Fprintf(&sb, "\nnext %s %s", next, fzErr(err))
	for _, p := range fzParents {
		kids, err := b.st.RunListChildren(ctx, p, "")
		fmt.Fprintf(&sb, "\nchildren %q %s", p, fzErr(err))
		for _, k := range kids {
			fmt.Fprintf(&sb, " %q", k.RunID)
		}
	}
	sb.WriteString("\n" + fzCommands(ctx, b, 0, 100000))
	sb.WriteString("\n" + fzLastSeq(ctx, b))
	for _, c := range fzConsumers {
		v, err := b.st.CursorLoad(ctx, c)
		fmt.Fprintf(&sb, "\ncursor %q %d %s", c, v, fzErr(err))
	}
	return sb.String()
}

func fzCommands(ctx context.Context, b *fzBackend, after int64, limit int) string {
	cs, next, err := b.st.CommandListAfter(ctx, after, limit)
	var sb strings.Builder
	fmt.Fprintf(&sb, "commands after %d limit %d: %s next=%d", after, limit, fzErr(err), next)
	for _, c := range cs {
		sb.WriteString(" " + fzCmdText(c))
	}
	return sb.String()
}

// fzLastSeq is CommandLastSeq; on the in-memory store, which documents
// that it keeps the counter after deletes, the highest stored seq.
func fzLastSeq(ctx context.Context, b *fzBackend) string {
	if b.memory {
		cs, _, err := b.st.CommandListAfter(ctx, 0, 1<<30)
		var m int64
		for _, c := range cs {
			m = max(m, c.Seq)
		}
		return fmt.Sprintf("lastseq %d %s", m, fzErr(err))
	}
	v, err := b.st.CommandLastSeq(ctx)
	return fmt.Sprintf("lastseq %d %s", v, fzErr(err))
}

// fzOp decodes one op and runs it on every backend; it returns the op's
// description and the backends' answers.
func fzOp(t *testing.T, ctx context.Context, rd *fzReader, bs []*fzBackend, created map[string]byte) (desc string, got map[string]string) {
	op := rd.next()
	switch op % 20 {
	case 0, 1: // create
		spec := fzSpec(rd, fzPick(rd, fzIDs))
		recs := fzRecords(rd, spec.id)
		flags := rd.next()
		desc = fmt.Sprintf("create %+v recs=%d", spec, len(recs))
		defer func() { // the created_at a run keeps (see the commit below)
			if strings.HasPrefix(got["memory"], "ok") {
				created[spec.id] = spec.created
			}
		}()
		return desc, fzAnswers(bs, func(b *fzBackend) string {
			r := spec.build()
			rs := cloneRecs(recs)
			err := b.st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: rs, Handoff: flags&1 == 1})
			if err == nil {
				b.ver[spec.id] = r.Version
			}
			return fmt.Sprintf("%s v%d seqs=%v", fzErr(err), r.Version, recSeqs(rs))
		})
	case 2, 3, 4: // commit an update
		spec := fzSpec(rd, fzPick(rd, fzIDs))
		// The SQLite store keeps the created_at column as written at the
		// creation, as Python's runs.save does (runtime-model.md: "on
		// conflict every column except created_at is replaced"), while
		// run_json has the new one: RunIndex rows and RunListChildren's
		// order would disagree with memory. Runs keep their created_at
		// (the runtime never changes it: docs/compatibility.md).
		spec.created = created[spec.id]
		recs := fzRecords(rd, spec.id)
		vmode := rd.next() % 6
		desc := fmt.Sprintf("commit %+v recs=%d version-mode=%d", spec, len(recs), vmode)
		return desc, fzAnswers(bs, func(b *fzBackend) string {
			r := spec.build()
			r.Version = b.ver[spec.id]
			switch vmode {
			case 3:
				r.Version++
			case 4:
				r.Version--
			case 5:
				r.Version = 0
			}
			rs := cloneRecs(recs)
			err := b.st.RunCommit(ctx, &store.CommitParams{Run: r, Records: rs})
			if err == nil {
				b.ver[spec.id] = r.Version
			}
			return fmt.Sprintf("%s v%d seqs=%v", fzErr(err), r.Version, recSeqs(rs))
		})
	case 5: // get
		id := fzPick(rd, fzIDs)
		return "get " + fmt.Sprintf("%q", id), fzAnswers(bs, func(b *fzBackend) string {
			r, err := b.st.RunGet(ctx, id)
			if err != nil {
				return fzErr(err)
			}
			b.ver[id] = r.Version
			return fzRunText(r, true)
		})
	case 6: // delete
		id := fzPick(rd, fzIDs)
		return "delete " + fmt.Sprintf("%q", id), fzAnswers(bs, func(b *fzBackend) string {
			ok, err := b.st.RunDelete(ctx, id)
			return fmt.Sprintf("%v %s", ok, fzErr(err))
		})
	case 7: // ledger append
		id := fzPick(rd, fzIDs)
		recs := fzRecords(rd, id)
		return fmt.Sprintf("ledger append %q %d", id, len(recs)), fzAnswers(bs, func(b *fzBackend) string {
			rs := cloneRecs(recs)
			err := b.st.LedgerAppend(ctx, id, rs)
			return fmt.Sprintf("%s seqs=%v", fzErr(err), recSeqs(rs))
		})
	case 8: // ledger list
		id := fzPick(rd, fzIDs)
		after := []int64{0, 1, 2, -1, 100, 3}[rd.next()%6]
		limit := []int{0, 1, 2, -1, 5}[rd.next()%5]
		return fmt.Sprintf("ledger list %q after %d limit %d", id, after, limit), fzAnswers(bs, func(b *fzBackend) string {
			recs, err := b.st.LedgerList(ctx, &store.LedgerListParams{RunID: id, After: after, Limit: limit})
			var sb strings.Builder
			sb.WriteString(fzErr(err))
			for _, r := range recs {
				sb.WriteString(" " + fzRecText(r))
			}
			return sb.String()
		})
	case 9: // ledger count / delete
		id := fzPick(rd, fzIDs)
		del := rd.next()&1 == 1
		return fmt.Sprintf("ledger count/delete(%v) %q", del, id), fzAnswers(bs, func(b *fzBackend) string {
			if del {
				n, err := b.st.LedgerDelete(ctx, id)
				return fmt.Sprintf("deleted %d %s", n, fzErr(err))
			}
			n, err := b.st.LedgerCount(ctx, id)
			return fmt.Sprintf("count %d %s", n, fzErr(err))
		})
	case 10: // find completed
		id := fzPick(rd, fzIDs)
		key := []string{"", "k-a", "k-b", "k-c"}[rd.next()%4]
		return fmt.Sprintf("find %q %q", id, key), fzAnswers(bs, func(b *fzBackend) string {
			r, err := store.FindCompleted(ctx, b.st, id, key)
			if r == nil {
				return "nil " + fzErr(err)
			}
			return fzRecText(r) + " " + fzErr(err)
		})
	case 11: // command append
		cid, rid, typ := fzPick(rd, fzCmdIDs), fzPick(rd, fzIDs), fzPick(rd, fzCmdTypes)
		x := rd.next()
		desc := fmt.Sprintf("command append %q run %q type %q x=%d", cid, rid, typ, x)
		return desc, fzAnswers(bs, func(b *fzBackend) string {
			c := &durable.CommandRecord{CommandID: cid, RunID: rid, Type: typ, Payload: map[string]any{"x": int(x)}, ClientID: []string{"", "cl"}[x%2]}
			switch x >> 6 {
			case 0:
				c.TS = fzTime(x)
			case 1:
				c.SetTSText("2026-01-01T00:00:00Z")
			case 2:
				c.SetTSText("not a time")
			default:
				c.TS = durable.NewTime(fzT0)
			}
			res, err := b.st.CommandAppend(ctx, c)
			return fmt.Sprintf("%+v %s", res, fzErr(err))
		})
	case 12: // command list
		after := []int64{0, 1, 2, -1, 5, 1 << 62}[rd.next()%6]
		limit := []int{0, 1, 2, -1, 1000}[rd.next()%5]
		return fmt.Sprintf("commands after %d limit %d", after, limit), fzAnswers(bs, func(b *fzBackend) string {
			return fzCommands(ctx, b, after, limit)
		})
	case 13: // command delete by run / last seq
		id := fzPick(rd, fzIDs)
		del := rd.next()&1 == 1
		return fmt.Sprintf("command delete(%v) %q", del, id), fzAnswers(bs, func(b *fzBackend) string {
			if del {
				n, err := b.st.CommandDeleteByRun(ctx, id)
				return fmt.Sprintf("deleted %d %s; %s", n, fzErr(err), fzLastSeq(ctx, b))
			}
			return fzLastSeq(ctx, b)
		})
	case 14: // cursors
		c := fzPick(rd, fzConsumers)
		v := []int64{0, 1, 3, -1, 1 << 40}[rd.next()%5]
		save := rd.next()&1 == 1
		return fmt.Sprintf("cursor %q save(%v) %d", c, save, v), fzAnswers(bs, func(b *fzBackend) string {
			var s string
			if save {
				s = fzErr(b.st.CursorSave(ctx, c, v)) + "; "
			}
			got, err := b.st.CursorLoad(ctx, c)
			return fmt.Sprintf("%s%d %s", s, got, fzErr(err))
		})
	case 15: // claim / release
		id := fzPick(rd, fzIDs)
		owner := []string{"a", "b"}[rd.next()%2]
		fl := rd.next()
		ttl := []time.Duration{0, time.Second, 10 * time.Second, -time.Second}[fl%4]
		now := fzT0.Add(time.Duration(fl>>2%8) * 3 * time.Second)
		p := store.RunClaimParams{RunID: id, Owner: owner, TTL: ttl, Now: now, Force: fl&0x20 != 0, Renew: fl&0x40 != 0,
			From: []string{"", "a", "b"}[int(rd.next())%3]}
		release := fl&0x80 != 0
		return fmt.Sprintf("claim %+v release=%v", p, release), fzAnswers(bs, func(b *fzBackend) string {
			c, ok := b.st.(store.RunClaimer)
			if !ok {
				return "no claims"
			}
			if release {
				return "release " + fzErr(c.RunRelease(ctx, id, owner))
			}
			pp := p
			err := c.RunClaim(ctx, &pp)
			var held *store.ClaimHeldError
			if errors.As(err, &held) {
				return fmt.Sprintf("held by %q (%s)", held.Owner, fzErr(err))
			}
			return fzErr(err)
		})
	case 16: // run list
		b0, b1 := rd.next(), rd.next()
		p := store.RunListParams{Status: fzPick(rd, fzStatuses), WaitReason: fzReasons[int(b0)%len(fzReasons)],
			WorkflowID: []string{"", "wf", "__int", "wf%"}[b0>>4%4], SessionID: []string{"", "s1", " s1 "}[b1%3],
			ParentID: []string{"", "r1", "a/b", "ghost"}[b1>>2%4], ActorID: []string{"", "u1", "u2"}[b1>>4%3],
			Limit: []int{0, 1, 2, -1, 5}[b0>>6%4+b1>>7]}
		switch b1 >> 6 % 2 {
		case 1:
			p.WaitKeys = [][]string{{"k1"}, {"k1", "k2"}, {""}, {"sub:k1", "k3"}}[b0>>2%4]
		}
		return fmt.Sprintf("list %+v", p), fzAnswers(bs, func(b *fzBackend) string {
			runs, err := b.st.RunList(ctx, &p)
			var sb strings.Builder
			sb.WriteString(fzErr(err))
			for _, r := range runs {
				if !p.Matches(r) {
					t.Errorf("%s: RunList(%+v) gave %s, which does not match", b.name, p, fzRunText(r, false))
				}
				sb.WriteString(" " + fzRunText(r, true))
			}
			return sb.String()
		})
	case 17: // due
		now := fzT0.Add([]time.Duration{-time.Minute, 0, 5 * time.Second, time.Hour, 24 * 365 * 200 * time.Hour, 5*time.Second + 200*time.Nanosecond}[rd.next()%6])
		limit := []int{0, 1, 2, -1}[rd.next()%4]
		return fmt.Sprintf("due %s limit %d", now, limit), fzAnswers(bs, func(b *fzBackend) string {
			due, err := b.st.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: limit})
			next, err2 := b.st.RunNextDue(ctx)
			return fmt.Sprintf("%s %v next=%s %s", fzErr(err), due, next, fzErr(err2))
		})
	case 18: // children
		parent, status := fzPick(rd, fzParents), fzPick(rd, fzStatuses)
		return fmt.Sprintf("children %q %q", parent, status), fzAnswers(bs, func(b *fzBackend) string {
			kids, err := b.st.RunListChildren(ctx, parent, status)
			var sb strings.Builder
			sb.WriteString(fzErr(err))
			for _, r := range kids {
				sb.WriteString(" " + fzRunText(r, true))
			}
			return sb.String()
		})
	default: // run index: one page, or paged to the end
		b0, b1, b2 := rd.next(), rd.next(), rd.next()
		p := store.RunIndexParams{Status: fzStatuses[int(b0)%len(fzStatuses)], WorkflowID: []string{"", "wf", "__int", "_x"}[b0>>3%4],
			SessionID: []string{"", "s1", " s1 ", "s2"}[b0>>5%4], RootOnly: b0&0x80 != 0,
			ExcludeWorkflowPrefix: []string{"", "__", "_", "wf", "wf%"}[b1%5], ActorID: []string{"", "u1", "u2"}[b1>>3%3]}
		limit := []int{0, 1, 2, 3, -1}[b1>>5%5]
		if b2&1 == 1 {
			size := 1 + int(b2>>1%3)
			return fmt.Sprintf("index paged by %d %+v", size, p), fzAnswers(bs, func(b *fzBackend) string {
				return fzIndexAll(t, ctx, b, p, size)
			})
		}
		if b2&2 == 2 {
			p.Before = &store.RunIndexCursor{UpdatedAt: fzTime(b2 >> 2), RunID: fzIDs[int(b2>>4)%len(fzIDs)]}
		}
		p.Limit = limit
		return fmt.Sprintf("index %+v before=%+v", p, p.Before), fzAnswers(bs, func(b *fzBackend) string {
			rows, err := b.st.RunIndex(ctx, &p)
			var sb strings.Builder
			sb.WriteString(fzErr(err))
			for _, r := range rows {
				sb.WriteString(" " + fzRowText(r))
			}
			return sb.String()
		})
	}
}

func cloneRecs(recs []*durable.StepRecord) []*durable.StepRecord {
	out := make([]*durable.StepRecord, len(recs))
	for i, r := range recs {
		c := *r
		if r.Effect != nil {
			e := *r.Effect
			c.Effect = &e
		}
		out[i] = &c
	}
	return out
}

func recSeqs(recs []*durable.StepRecord) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

func FuzzStoreProgram(f *testing.F) {
	// create r1 waiting until, get it, commit at the right version, a
	// stale one, list due, index paged.
	f.Add([]byte{0, 0, 0, 0, 1, 2, 0, 1, 1, 0, 5, 0, 2, 0, 0, 0, 1, 2, 0, 2, 1, 0, 3, 0, 0, 0, 1, 2, 0, 2, 0, 3, 17, 3, 0, 19, 0, 0, 1})
	// odd ids: create each of the pool, then list and page.
	var odd []byte
	for i := range fzIDs {
		odd = append(odd, 1, byte(i), byte(i*37), 1, byte(i), byte(i*3), byte(i), byte(i*5), 1, byte(i), 0)
	}
	odd = append(odd, 19, 0, 0, 3, 16, 0, 0, 0, 5, 4, 6, 3)
	f.Add(odd)
	// ledger, commands and cursors.
	f.Add([]byte{0, 1, 0, 0, 7, 1, 2, 2, 2, 7, 0, 3, 1, 9, 41, 8, 0, 0, 0, 10, 0, 1, 11, 0, 0, 0, 1, 11, 2, 0, 1, 2, 11, 0, 1, 0, 3,
		12, 0, 0, 13, 0, 1, 13, 0, 0, 14, 0, 2, 1, 14, 2, 1, 1, 14, 3, 1, 1, 9, 0, 1})
	// claims with renewals, forces and releases.
	f.Add([]byte{15, 0, 0, 2, 0, 15, 0, 1, 2, 0, 15, 0, 1, 0x22, 1, 15, 0, 0, 0x42, 0, 15, 0, 0, 0x8e, 0, 15, 0, 1, 0x4a, 0, 15, 4, 1, 1, 0})
	// children and the index under filters.
	f.Add([]byte{0, 0, 0x80, 0, 7, 1, 0, 1, 0, 1, 0, 1, 1, 3, 2, 1, 0, 0, 1, 0, 2, 0x21, 1, 4, 3, 3, 0, 0, 0, 0,
		18, 1, 0, 18, 1, 2, 19, 0x80, 0, 1, 19, 0, 1, 3, 19, 0x21, 0x49, 2, 16, 0, 0x05, 0, 16, 0x40, 0x40, 2})
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 400 {
			prog = prog[:400]
		}
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		bs := fzBackends(t, ctx)
		closed := false
		defer func() {
			if !closed {
				for _, b := range bs {
					_ = b.st.Close()
				}
			}
		}()
		rd := &fzReader{b: prog}
		var log []string
		created := map[string]byte{}
		for n := 0; n < fzMaxOps && !rd.done(); n++ {
			desc, got := fzOp(t, ctx, rd, bs, created)
			log = append(log, desc)
			if fzDebug {
				t.Logf("%s\n    memory: %s\n    jsonshape: %s", desc, got["memory"], got["jsonshape"])
			}
			fzCompare(t, bs, desc, got)
			if t.Failed() {
				t.Fatalf("program so far:\n  %s", strings.Join(log, "\n  "))
			}
		}
		// Durability: the same answers before a close and after a reopen.
		before := fzAnswers(bs, func(b *fzBackend) string { return fzSnapshot(t, ctx, b) })
		for _, b := range bs {
			if before[b.name] != before[b.ref] {
				t.Errorf("%s differs from %s on the final state:\n%s", b.name, b.ref, fzDiff(before[b.ref], before[b.name]))
			}
		}
		if t.Failed() {
			t.Fatalf("program:\n  %s", strings.Join(log, "\n  "))
		}
		closed = true
		for _, b := range bs {
			if err := b.st.Close(); err != nil {
				t.Errorf("%s: close: %v", b.name, err)
			}
			if err := b.st.Close(); err != nil {
				t.Errorf("%s: second close: %v", b.name, err)
			}
		}
		var reopened []*fzBackend
		for _, b := range bs {
			if b.reopen == nil {
				continue
			}
			st, err := b.reopen()
			if err != nil {
				t.Fatalf("%s: reopen: %v\nprogram:\n  %s", b.name, err, strings.Join(log, "\n  "))
			}
			nb := *b
			nb.st = st
			if strings.HasPrefix(b.name, "jsonfile") {
				// Versions live in process (jsonfile package doc): a run
				// found at open is at version 1.
				nb.noVer = true
			}
			reopened = append(reopened, &nb)
		}
		defer func() {
			for _, b := range reopened {
				_ = b.st.Close()
			}
		}()
		for _, b := range reopened {
			after := fzSnapshot(t, ctx, b)
			want := before[b.name]
			if b.noVer {
				b.noVer = false
				_ = b // the pre-close answer with versions left out:
				want = fzStripVersions(want)
				after = fzStripVersions(after)
			}
			if after != want {
				t.Errorf("%s: after a reopen the stored state differs:\n%s\nprogram:\n  %s", b.name, fzDiff(want, after), strings.Join(log, "\n  "))
			}
		}
	})
}

// fzStripVersions drops the "v<n> " version prefixes of run texts.
func fzStripVersions(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 'v' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\n') {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(s) && s[j] == ' ' && j+1 < len(s) && s[j+1] == '{' {
				i = j
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// fzDiff shows the lines of a and b that differ.
func fzDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var sb strings.Builder
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&sb, "  want: %s\n  got:  %s\n", x, y)
		}
	}
	return sb.String()
}
