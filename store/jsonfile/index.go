package jsonfile

import (
	"io/fs"
	"slices"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
	"github.com/abstractframework/abstractgateway/store"
)

// runMeta is what the store keeps in memory for every run: the indexed
// fields (a RunState without vars or output, which store.RunListParams
// filters and store.IndexRow read), the sanitised lifecycle, the version,
// and what identifies the run file they were taken from. Never changed
// once in s.runs (readers use it outside s.mu): replaced whole.
type runMeta struct {
	stub      *durable.RunState
	lifecycle map[string]any
	version   int64
	// stamp and sum are the run file's stamp (zero when unknown) and the
	// FNV-1a of its bytes, as the store last wrote or read them: a file
	// another process saved since is told by its stamp, and a save of the
	// same bytes (which changes nothing) by its sum.
	stamp fileStamp
	sum   uint64
	// due is the run's store.Deadline, worked out from the whole state
	// (the stub has no vars).
	due    durable.Time
	hasDue bool
}

func newMeta(r *durable.RunState, version int64) *runMeta {
	// Times as the file holds them (UTC, to the microsecond), which a
	// commit's caller may not have given: listings order by them.
	stub := &durable.RunState{
		RunID: r.RunID, WorkflowID: r.WorkflowID, Status: r.Status, CurrentNode: r.CurrentNode,
		CreatedAt: durable.NewTime(r.CreatedAt.Time), UpdatedAt: durable.NewTime(r.UpdatedAt.Time),
		ActorID: r.ActorID, SessionID: r.SessionID, ParentRunID: r.ParentRunID,
	}
	if w := r.Waiting; w != nil {
		stub.Waiting = &durable.WaitState{Reason: w.Reason, WaitKey: w.WaitKey, Until: durable.NewTime(w.Until.Time)}
	}
	m := &runMeta{stub: stub, lifecycle: store.RunLifecycle(r.Vars), version: version}
	m.due, m.hasDue = store.Deadline(r)
	return m
}

// cachedRun is the last state read or written for a run (frozen: compact,
// and a reader thaws its own copy), valid while the same file (fileID) is
// at the run's path with the same modification time and size. Time and
// size alone miss a rewrite by another process within one timestamp tick
// that keeps the size (Python saves by os.replace: a new file).
type cachedRun struct {
	mtime time.Time
	size  int64
	file  fileID
	run   frozen.Run
	// sum is the FNV-1a of the file's bytes, when summed (this store wrote
	// them): what a terminal commit's staged name records of the run file
	// it replaces (stagedNameOf), known without reading the file again.
	sum    uint64
	summed bool
}

// fileStamp is what a stat says of a run file: enough to tell, without
// reading it, that the file is still the one last written or read there
// (see cachedRun).
type fileStamp struct {
	mtime time.Time
	size  int64
	file  fileID
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{mtime: fi.ModTime(), size: fi.Size(), file: fileIDOf(fi)}
}

// matches reports whether fi is the file st was taken of; a zero st
// (unknown) matches nothing.
func (st fileStamp) matches(fi fs.FileInfo) bool {
	return !st.mtime.IsZero() && st.mtime.Equal(fi.ModTime()) && st.size == fi.Size() && st.file == fileIDOf(fi)
}

// same reports whether st and o are stamps of the same file.
func (st fileStamp) same(o fileStamp) bool {
	return st.mtime.Equal(o.mtime) && st.size == o.size && st.file == o.file
}

// fileID tells files apart where modification times cannot: its device
// and inode numbers (fileIDOf), the zero value where the system gives
// none.
type fileID struct{ dev, ino uint64 }

// runIndex holds the lookup structures the queries use instead of
// scanning run files.
type runIndex struct {
	byStatus  map[durable.RunStatus]map[string]struct{}
	byWaitKey map[string]map[string]struct{}
	children  map[string]map[string]struct{}
	due       store.DueIndex
}

func newRunIndex() runIndex {
	return runIndex{
		byStatus:  map[durable.RunStatus]map[string]struct{}{},
		byWaitKey: map[string]map[string]struct{}{},
		children:  map[string]map[string]struct{}{},
	}
}

func addTo[K comparable](m map[K]map[string]struct{}, k K, id string) {
	set := m[k]
	if set == nil {
		set = map[string]struct{}{}
		m[k] = set
	}
	set[id] = struct{}{}
}

func removeFrom[K comparable](m map[K]map[string]struct{}, k K, id string) {
	if set := m[k]; set != nil {
		delete(set, id)
		if len(set) == 0 {
			delete(m, k)
		}
	}
}

// setLocked replaces the index entries of a run (old may be nil for a new
// run, m nil for a deleted one). The caller holds s.mu.
func (s *Store) setLocked(id string, m *runMeta) {
	if old := s.runs[id]; old != nil {
		removeFrom(s.idx.byStatus, old.stub.Status, id)
		if w := old.stub.Waiting; w != nil && w.WaitKey != "" {
			removeFrom(s.idx.byWaitKey, w.WaitKey, id)
		}
		if p := old.stub.ParentRunID; p != "" {
			removeFrom(s.idx.children, p, id)
		}
		s.idx.due.Remove(id)
	}
	if m == nil {
		delete(s.runs, id)
		s.cache.Remove(id)
		return
	}
	s.runs[id] = m
	addTo(s.idx.byStatus, m.stub.Status, id)
	if w := m.stub.Waiting; w != nil && w.WaitKey != "" {
		addTo(s.idx.byWaitKey, w.WaitKey, id)
	}
	if p := m.stub.ParentRunID; p != "" {
		addTo(s.idx.children, p, id)
	}
	if m.hasDue {
		s.idx.due.Set(id, m.due)
	}
}

// candidatesLocked returns the metas that may match p, using the most
// selective index available. The caller holds s.mu and still filters
// with p.Matches.
func (s *Store) candidatesLocked(p *store.RunListParams) []*runMeta {
	var out []*runMeta
	addSet := func(set map[string]struct{}) {
		for id := range set {
			if m := s.runs[id]; m != nil {
				out = append(out, m)
			}
		}
	}
	switch {
	case len(p.WaitKeys) > 0:
		for _, k := range slices.Compact(slices.Sorted(slices.Values(p.WaitKeys))) {
			addSet(s.idx.byWaitKey[k])
		}
	case p.ParentID != "":
		addSet(s.idx.children[p.ParentID])
	case p.Status != "":
		addSet(s.idx.byStatus[p.Status])
	default:
		for _, m := range s.runs {
			out = append(out, m)
		}
	}
	return out
}
