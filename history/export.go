package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// Version is the bundle format version written in the "version" key.
const Version = 1

// Defaults and bounds of an export (spec §6.2).
const (
	// DefaultLedgerMaxItems is the tail window when Options gives none.
	DefaultLedgerMaxItems = 2000
	// DefaultSessionTurnLimit is the number of session turns kept when
	// Options gives none.
	DefaultSessionTurnLimit = 200
	// MaxSubruns caps the descendants a bundle covers.
	MaxSubruns = 5000
	// MaxArtifactsPerRun caps the artifact summaries of one run (and of
	// one session turn).
	MaxArtifactsPerRun = 500
)

// Source holds the stores a bundle is read from.
type Source struct {
	// Runs loads the run, its descendants and its session's runs.
	// Required.
	Runs store.RunStore
	// Ledger lists each run's records. Required.
	Ledger store.LedgerStore
	// Artifacts, when set, supplies artifact summaries and receives the
	// oversized input values of the bundle. Optional.
	Artifacts artifact.Store
}

// LedgerMode selects how much of each ledger a bundle carries.
type LedgerMode string

// Ledger modes.
const (
	// LedgerTail keeps the last Options.LedgerMaxItems records of each
	// run, with their absolute cursors.
	LedgerTail LedgerMode = "tail"
	// LedgerFull keeps every record.
	LedgerFull LedgerMode = "full"
)

// Options tunes an export. The zero value gives the spec's defaults:
// subruns included, no session, a tail window of 2000 records.
type Options struct {
	// SkipSubruns restricts the bundle to the run itself (Python
	// include_subruns=False).
	SkipSubruns bool
	// IncludeSession adds the turns of the run's session.
	IncludeSession bool
	// SessionTurnLimit keeps the newest turns; ≤0 means
	// DefaultSessionTurnLimit.
	SessionTurnLimit int
	// LedgerMode is "" (tail), LedgerTail or LedgerFull, in any case.
	LedgerMode LedgerMode
	// LedgerMaxItems is the tail window: 0 means DefaultLedgerMaxItems,
	// negative keeps every record (as a non-positive Python limit does).
	LedgerMaxItems int
	// MaxInlineBytes is the offload threshold of input_data: 0 means
	// artifact.DefaultMaxInlineBytes (262144), negative disables
	// offloading. ABSTRACTRUNTIME_MAX_INLINE_BYTES is not read: as in
	// Python, it tunes the offloading stores, not the bundle, which stays
	// bounded whatever the stores do.
	MaxInlineBytes int
	// Now stamps generated_at; time.Now when nil.
	Now func() time.Time
}

// exporter carries one export's inputs and the exported tree's ledgers
// (the session turns read some of them again).
type exporter struct {
	src  Source
	opts Options
	tail int // records kept per ledger; 0 keeps all
	// ledgers keeps the whole ledgers of the exported run's tree, for the
	// session turns to read again (one of them is usually that tree); nil
	// (ledgers read as windows, nothing kept) without a session section.
	// A turn's other ledgers are read for that turn only.
	ledgers map[string][]*durable.StepRecord
	// trees holds the run trees (the run, then its descendants breadth
	// first) already listed, by root: the exported run's is usually one
	// of its session's turns too.
	trees map[string][]string
}

// Export builds the history bundle of runID (spec §6.2): version,
// generated_at, root_run_id, run, workflow_snapshot, input_data, ledgers,
// timeline and session. An unknown run is an error wrapping
// store.ErrNotFound and naming the id; store failures are returned too,
// rather than leaving a bundle silently incomplete.
func Export(ctx context.Context, src Source, runID string, opts Options) (map[string]any, error) {
	if runID == "" {
		return nil, errors.New("history: export: run id is required")
	}
	if src.Runs == nil || src.Ledger == nil {
		return nil, errors.New("history: export: Source.Runs and Source.Ledger are required")
	}
	id := pyval.Strip(runID)
	if id != runID {
		// Python strips the id; but Start keeps an explicit id as given,
		// so a run " x " (or " ") exists under its padded id, which is
		// tried first (the stripped one stays the fallback for a caller's
		// padding around an id).
		if _, err := src.Runs.RunGet(ctx, runID); err == nil {
			id = runID
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("history: export run %q: loading run: %w", runID, err)
		}
	}
	if id == "" {
		return nil, errors.New("history: export: run id is required")
	}
	e := &exporter{src: src, opts: opts, trees: map[string][]string{}}
	var err error
	if e.tail, err = tailSize(opts); err != nil {
		return nil, fmt.Errorf("history: export run %q: %w", id, err)
	}
	bundle, err := e.export(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("history: export run %q: %w", id, err)
	}
	return bundle, nil
}

// tailSize resolves the ledger window: the number of records kept per
// run, 0 for all of them.
func tailSize(opts Options) (int, error) {
	switch LedgerMode(pyval.Lower(pyval.Strip(string(opts.LedgerMode)))) {
	case "", LedgerTail:
	case LedgerFull:
		return 0, nil
	default:
		return 0, fmt.Errorf("unknown ledger mode %q (want %q or %q)", opts.LedgerMode, LedgerTail, LedgerFull)
	}
	switch {
	case opts.LedgerMaxItems < 0:
		return 0, nil
	case opts.LedgerMaxItems == 0:
		return DefaultLedgerMaxItems, nil
	}
	return opts.LedgerMaxItems, nil
}

func (e *exporter) export(ctx context.Context, id string) (map[string]any, error) {
	run, err := e.src.Runs.RunGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("loading run: %w", err)
	}
	ids := []string{id}
	if !e.opts.SkipSubruns {
		if ids, err = e.subtree(ctx, id); err != nil {
			return nil, err
		}
	}
	if e.opts.IncludeSession && pyval.Strip(run.SessionID) != "" {
		e.ledgers = map[string][]*durable.StepRecord{}
	}
	ledgers := make(map[string]any, len(ids))
	timeline := []any{}
	for _, rid := range ids {
		section, entries, err := e.ledgerSection(ctx, rid)
		if err != nil {
			return nil, err
		}
		ledgers[rid] = section
		timeline = append(timeline, entries...)
	}
	// The session is read before input_data is offloaded, as in Python: a
	// bundle never lists the artifacts its own export creates.
	var session any
	if sid := pyval.Strip(run.SessionID); e.opts.IncludeSession && sid != "" {
		if session, err = e.sessionSection(ctx, run, sid); err != nil {
			return nil, err
		}
	}
	input, err := e.inputData(ctx, run)
	if err != nil {
		return nil, err
	}
	bundle := map[string]any{
		"version":           Version,
		"generated_at":      durable.FormatTime(now(e.opts.Now)),
		"root_run_id":       id,
		"run":               runSummary(run),
		"workflow_snapshot": mapOrNil(snapshotRef(run)),
		"input_data":        input,
		"ledgers":           ledgers,
		"timeline":          timeline,
		"session":           session,
	}
	out, err := pyjson.NormalizeObject(bundle)
	if err != nil {
		return nil, fmt.Errorf("encoding bundle: %w", err)
	}
	return out, nil
}

func now(clock func() time.Time) time.Time {
	if clock == nil {
		return time.Now()
	}
	return clock()
}

// descendants lists the runs below root, breadth first (children in the
// store's order), at most MaxSubruns of them.
func descendants(ctx context.Context, runs store.RunStore, root string) ([]string, error) {
	var out []string
	seen := map[string]bool{root: true}
	queue := []string{root}
	for len(queue) > 0 && len(out) < MaxSubruns {
		cur := queue[0]
		queue = queue[1:]
		kids, err := runs.RunListChildren(ctx, cur, "")
		if err != nil {
			return nil, fmt.Errorf("listing children of run %s: %w", cur, err)
		}
		for _, k := range kids {
			// The id as stored, not stripped as Python's: a child an
			// explicit run id padded (START_SUBWORKFLOW's run_id) is found
			// by no other.
			kid := k.RunID
			if kid == "" || seen[kid] {
				continue
			}
			seen[kid] = true
			out = append(out, kid)
			queue = append(queue, kid)
			if len(out) == MaxSubruns {
				break
			}
		}
	}
	return out, nil
}

// subtree returns root and its descendants, listed once per export.
func (e *exporter) subtree(ctx context.Context, root string) ([]string, error) {
	if tree, ok := e.trees[root]; ok {
		return tree, nil
	}
	kids, err := descendants(ctx, e.src.Runs, root)
	if err != nil {
		return nil, err
	}
	tree := append([]string{root}, kids...)
	e.trees[root] = tree
	return tree, nil
}

// ledger returns a run's whole ledger: the kept copy when the run is in
// the exported tree and a session section reads it again, else read from
// the store and not kept, so that ledgers are not all held at once.
func (e *exporter) ledger(ctx context.Context, runID string) ([]*durable.StepRecord, error) {
	if recs, ok := e.ledgers[runID]; ok {
		return recs, nil
	}
	recs, err := e.src.Ledger.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("reading ledger of run %s: %w", runID, err)
	}
	return recs, nil
}

// ledgerWindow returns the records of a run's ledger section (the last
// e.tail ones, or all) and the store's count of records. The whole
// ledger is read only when it is kept for the session section or wanted
// in full; otherwise only the tail is.
func (e *exporter) ledgerWindow(ctx context.Context, runID string) ([]*durable.StepRecord, int64, error) {
	if e.tail > 0 && e.ledgers == nil {
		return e.tailWindow(ctx, runID)
	}
	recs, err := e.ledger(ctx, runID)
	if err != nil {
		return nil, 0, err
	}
	if e.ledgers != nil {
		e.ledgers[runID] = recs
	}
	// Counted after the listing, so it covers every record listed (and
	// any skipped one); a record appended meanwhile only raises it.
	count, err := e.src.Ledger.LedgerCount(ctx, runID)
	if err != nil {
		return nil, 0, fmt.Errorf("counting ledger of run %s: %w", runID, err)
	}
	if e.tail > 0 && len(recs) > e.tail {
		recs = recs[len(recs)-e.tail:]
	}
	return recs, count, nil
}

// tailWindow reads the last e.tail records of a run's ledger without the
// rest. The store numbers records 1..count (their Seq, the cursor After
// compares with), so the window is what follows count-tail, records
// appended since the count included. A record the store cannot decode is
// skipped but keeps its number: while the window is short, earlier pages
// are read, newest first and growing, until it is full or the ledger's
// start is reached, so that it holds the same records as the tail of the
// whole listing.
func (e *exporter) tailWindow(ctx context.Context, runID string) ([]*durable.StepRecord, int64, error) {
	count, err := e.src.Ledger.LedgerCount(ctx, runID)
	if err != nil {
		return nil, 0, fmt.Errorf("counting ledger of run %s: %w", runID, err)
	}
	after := max(0, count-int64(e.tail))
	window, err := e.src.Ledger.LedgerList(ctx, &store.LedgerListParams{RunID: runID, After: after})
	if err != nil {
		return nil, 0, fmt.Errorf("reading ledger of run %s: %w", runID, err)
	}
	if len(window) > e.tail {
		window = window[len(window)-e.tail:]
	}
	for page := int64(e.tail - len(window)); len(window) < e.tail && after > 0; page *= 2 {
		from := max(0, after-page)
		recs, err := e.src.Ledger.LedgerList(ctx, &store.LedgerListParams{RunID: runID, After: from, Limit: int(after - from)})
		if err != nil {
			return nil, 0, fmt.Errorf("reading ledger of run %s: %w", runID, err)
		}
		// Skipped records let a page run on past after, into the window.
		recs = slices.DeleteFunc(recs, func(r *durable.StepRecord) bool { return r.Seq > after })
		recs = recs[max(0, len(recs)-(e.tail-len(window))):]
		window = append(recs, window...)
		after = from
	}
	return window, count, nil
}

// ledgerSection builds one run's entry of "ledgers" and its timeline
// entries. Cursors are the store's (each record's Seq), the numbers a
// client passes as `after` to follow the ledger: a record the store
// cannot decode is skipped by LedgerList but keeps its number, so
// numbering the records listed would drift from the store's after it.
func (e *exporter) ledgerSection(ctx context.Context, runID string) (map[string]any, []any, error) {
	window, count, err := e.ledgerWindow(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	total := count
	if n := len(window); n > 0 {
		total = max(total, window[n-1].Seq)
	}
	start := total + 1 // an empty window starts past the end
	if len(window) > 0 {
		start = window[0].Seq
	}
	end := start - 1
	items := make([]any, len(window))
	timeline := make([]any, len(window))
	for i, rec := range window {
		wire := rec.JSONValue(true)
		items[i] = map[string]any{"cursor": rec.Seq, "record": wire}
		timeline[i] = timelineEntry(runID, rec, wireObject(wire))
		end = rec.Seq
	}
	arts, err := e.runArtifacts(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	section := map[string]any{
		"run_id":       runID,
		"total":        total,
		"cursor_start": start,
		"cursor_end":   end,
		"items":        items,
		"artifacts":    arts,
	}
	return section, timeline, nil
}

// timelineEntry is the flat view of one record, wire being its wire
// object. The times are the record's texts as read, as Python copies
// them (a foreign spelling such as "…Z" stays); a record without an end
// (a STARTED record) ends when it started.
func timelineEntry(runID string, rec *durable.StepRecord, wire map[string]any) map[string]any {
	ended := rec.EndedAt
	endedText := wire["ended_at"]
	if s, _ := endedText.(string); s == "" {
		ended, endedText = rec.StartedAt, wire["started_at"]
	}
	var duration any
	if !rec.StartedAt.IsZero() && !ended.IsZero() {
		duration = durationMS(rec.StartedAt, ended)
	}
	var effectType string
	if rec.Effect != nil {
		effectType = string(rec.Effect.Type)
	}
	return map[string]any{
		"run_id":      runID,
		"cursor":      rec.Seq,
		"node_id":     blankToNil(rec.NodeID),
		"status":      blankToNil(string(rec.Status)),
		"effect_type": blankToNil(effectType),
		"started_at":  wire["started_at"],
		"ended_at":    endedText,
		"duration_ms": duration,
	}
}

// runSummary is the "run" section: the run's identity and state without
// its vars and output.
func runSummary(run *durable.RunState) map[string]any {
	wire := wireObject(run.JSONValue())
	out := map[string]any{}
	for _, k := range []string{"run_id", "workflow_id", "status", "current_node", "created_at", "updated_at",
		"actor_id", "session_id", "parent_run_id", "error", "waiting"} {
		out[k] = wire[k]
	}
	return out
}

// snapshotRef returns a copy of vars._runtime.workflow_snapshot when it
// names an artifact, else nil.
func snapshotRef(run *durable.RunState) map[string]any {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	ref, _ := rt[snapshotKey].(map[string]any)
	// Python's test is str(artifact_id or "").strip(): a ref naming its
	// artifact with a number still counts.
	if id := ref["artifact_id"]; !pyval.Truthy(id) || pyval.Strip(pyval.Str(id)) == "" {
		return nil
	}
	return pyjson.CloneObject(ref)
}

// inputData returns the run's public vars (keys not starting with "_"),
// with oversized values moved to the artifact store when there is one.
func (e *exporter) inputData(ctx context.Context, run *durable.RunState) (map[string]any, error) {
	input := map[string]any{}
	for k, v := range run.Vars {
		if !strings.HasPrefix(k, "_") {
			input[k] = v
		}
	}
	if e.src.Artifacts == nil {
		return input, nil
	}
	limit := e.opts.MaxInlineBytes
	if limit == 0 {
		limit = artifact.DefaultMaxInlineBytes
	}
	out, err := artifact.Offload(ctx, e.src.Artifacts, input, artifact.OffloadOptions{
		RunID:          run.RunID,
		MaxInlineBytes: limit,
		BaseTags:       map[string]string{"source": "history_bundle", "kind": "input_data"},
		RootPath:       "input_data",
	})
	if err != nil {
		return nil, fmt.Errorf("offloading input_data: %w", err)
	}
	if m, ok := out.(map[string]any); ok { // the root itself is never replaced
		return m, nil
	}
	return input, nil
}
