package jsonfile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/frozen"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// loadRuns scans run_*.json once and builds the indexes. Unreadable files
// are logged and left out.
func (s *Store) loadRuns() error {
	paths, err := atomicfile.Glob(s.dir, "run_*.json")
	if err != nil {
		return fmt.Errorf("jsonfile: listing run files: %w", err)
	}
	for _, path := range paths {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "run_"), ".json")
		if err := checkRunID(id); err != nil {
			// Another writer's file (Python takes any id its OS takes in a
			// name): listed, it would be polled for ever and never be read
			// or saved by id here.
			s.log.Warn("skipping a run file whose id this store refuses", "file", path, "err", err)
			continue
		}
		r, data, fi, err := readRunFile(id, path)
		if err != nil {
			s.log.Warn("skipping unreadable run file", "file", path, "err", err)
			continue
		}
		m := newMeta(r, 1)
		m.stamp, m.sum = stampOf(fi), appendSum(data)
		s.setLocked(id, m)
	}
	return nil
}

// readRunFile reads and decodes a run file; its run_id must match id. It
// returns the bytes read and the info of the file they were read from.
func readRunFile(id, path string) (*durable.RunState, []byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	data := make([]byte, 0, fi.Size()+512) // +512: it may have grown since
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, 4096)
		}
	}
	r, err := decodeRunFile(id, data)
	return r, data, fi, err
}

// decodeRunFile decodes the bytes of run id's file, read whole.
func decodeRunFile(id string, data []byte) (*durable.RunState, error) {
	r, err := durable.UnmarshalRun(data)
	if err != nil {
		return nil, err
	}
	if r.RunID != id {
		return nil, fmt.Errorf("run_id %q does not match the file name", r.RunID)
	}
	return r, nil
}

// RunCommit implements store.RunStore: the records are appended to the
// ledger first, then the run file is replaced atomically.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run == nil {
		return errors.New("jsonfile: commit: run is required")
	}
	id := p.Run.RunID
	if err := checkRunID(id); err != nil {
		return err
	}
	if p.Create {
		if err := store.CheckNewRunIDs(p.Run); err != nil {
			return fmt.Errorf("jsonfile: %w", err)
		}
	}
	if err := store.CheckRunReadable(p.Run); err != nil {
		return fmt.Errorf("jsonfile: committing run %s: %w", id, err)
	}
	if p.Create && len(id)+len("run_.json.")+32+len(".tmp") > maxNameLen {
		// Refused before anything is written: a new run file is written
		// to run_<id>.json.<32 hex>.tmp (atomicfile), a name the file
		// system refuses past maxNameLen. Runs with longer ids another
		// writer made are still read and saved.
		return fmt.Errorf("jsonfile: creating run %s (a %d-byte id): its temp file name would pass %d bytes: %w",
			idHead(id), len(id), maxNameLen, store.ErrInvalidID)
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	lk := s.stripe(id)
	lk.Lock()
	defer lk.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return err
	}

	s.mu.RLock()
	cur := s.runs[id]
	s.mu.RUnlock()
	path := s.runPath(id)
	if p.Create && cur != nil {
		// Known, but its file may have been deleted by another process
		// (Python serve --no-runner, a script, a user) since: the run no
		// longer exists, and a create writes it, as Python's does. The
		// ledger is kept and appended to, as after RunDelete.
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			s.mu.Lock()
			s.setLocked(id, nil)
			s.mu.Unlock()
			cur = nil
		}
	}
	switch {
	case p.Create && cur != nil:
		return fmt.Errorf("jsonfile: creating run %s: %w", id, store.ErrAlreadyExists)
	case p.Create:
		// A file the store did not load (unreadable at open, or written by
		// another process since) is never overwritten: writeNew fails. With
		// records to append first, look before appending them.
		if len(p.Records) > 0 {
			if err := notExisting(path); err != nil {
				return fmt.Errorf("jsonfile: creating run %s: %w", id, err)
			}
		}
	case cur == nil:
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("jsonfile: committing run %s: %s exists but was not loaded (unreadable?)", id, path)
		}
		return fmt.Errorf("jsonfile: committing run %s: %w", id, store.ErrNotFound)
	case cur.version != p.Run.Version:
		return fmt.Errorf("jsonfile: committing run %s at version %d (stored %d): %w",
			id, p.Run.Version, cur.version, store.ErrConflict)
	default:
		// Another process (Python, no lock) may have saved the run since
		// the store last wrote or read it: its save must win, as it does
		// in the SQLite store, not be overwritten by a state read before.
		// One stat per commit; the file is read only when it changed.
		fi, err := os.Stat(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("jsonfile: committing run %s: %w", id, err)
		}
		if err == nil && !cur.stamp.matches(fi) {
			if _, err := s.readRunLocked(id, path); err != nil {
				return fmt.Errorf("jsonfile: committing run %s: %s is unreadable: %w", id, path, err)
			}
			s.mu.RLock()
			cur = s.runs[id]
			s.mu.RUnlock()
			if cur.version != p.Run.Version {
				return fmt.Errorf("jsonfile: committing run %s at version %d: another process saved it since (now version %d): %w",
					id, p.Run.Version, cur.version, store.ErrConflict)
			}
		}
	}

	buf := pyjson.GetBuffer()
	defer pyjson.PutBuffer(buf)
	data, err := durable.AppendRun(*buf, p.Run, pyjson.Pretty)
	*buf = data // handed back to the pool grown, whatever happens
	if err != nil {
		return fmt.Errorf("jsonfile: encoding run %s: %w", id, err)
	}
	// A commit that ends the run stages its state before appending the
	// records, so that a crash between the two cannot leave the terminal
	// records without the state they end: the next open finds the staged
	// state and puts it in place (recoverStaged).
	var staged string
	var ledgerSize int64 // before the records, when staged
	var appendErr error  // of a staged commit's append that landed
	if len(p.Records) > 0 {
		var stage func(size int64, appended []byte) error
		if !p.Create && p.Run.Status.Terminal() && !cur.stub.Status.Terminal() {
			stage = func(size int64, appended []byte) error {
				name := s.stagedNameOf(id, path, size, appended)
				if name == "" {
					return nil // committed unstaged, as any other commit
				}
				var err error
				staged, err = s.spares.Stage(name, data)
				if err != nil {
					s.dirUnsynced.Store(true)
					return fmt.Errorf("staging the run file: %w", err)
				}
				ledgerSize = size
				s.killPointForTest("staged")
				return nil
			}
		}
		switch err := s.appendRecordsLocked(id, p.Records, stage); {
		case err == nil:
		case staged != "" && errors.Is(err, errAppendedUnsynced):
			// The records are in the ledger: finish the commit, so that
			// the run is not left with the records of an end it never
			// had, then report the error.
			appendErr = err
		case staged != "":
			return fmt.Errorf("jsonfile: committing run %s: %w", id, errors.Join(err, s.unstage(id, staged, ledgerSize, p.Records)))
		default:
			return fmt.Errorf("jsonfile: committing run %s: %w", id, err)
		}
		s.killPointForTest("appended")
	}
	var writeErr error
	switch {
	case staged != "":
		writeErr = s.promote(id, staged, path, ledgerSize, p.Records)
	case p.Create:
		writeErr = s.writeNew(path, data)
	default:
		writeErr = s.replaceFile(path, data)
	}
	if writeErr != nil && !errors.Is(writeErr, atomicfile.ErrUnsynced) {
		if p.Create && errors.Is(writeErr, fs.ErrExist) {
			return fmt.Errorf("jsonfile: creating run %s: %w", id, unloaded(path))
		}
		return fmt.Errorf("jsonfile: saving run %s: %w", id, errors.Join(appendErr, writeErr))
	}
	// The file is in place. When a directory sync failed on the way, the
	// commit is still reported as failed (it may not survive a power
	// loss), but the indexes follow the file, as a read of it does: the
	// caller's run keeps its version, so its next commit conflicts and it
	// reads the run again, as after a lost answer.
	p.Run.Version++
	// The cached copy is in the decoder's types, so that a hot read
	// returns what a read of the file would. It cannot fail once the run
	// encoded; if it did, the file is simply read next time.
	run, cacheErr := frozen.NewStoredRun(p.Run)
	c := &cachedRun{run: run, size: -1}
	meta := newMeta(p.Run, p.Run.Version)
	meta.sum = appendSum(data)
	if fi, err := os.Stat(path); err == nil {
		meta.stamp = stampOf(fi)
		if cacheErr == nil {
			c.mtime, c.size, c.file = fi.ModTime(), fi.Size(), fileIDOf(fi)
			c.sum, c.summed = meta.sum, true
		}
	}
	s.mu.Lock()
	s.setLocked(id, meta)
	if c.size >= 0 {
		s.cache.Put(id, c, int64(len(data)))
	} else {
		s.cache.Remove(id)
	}
	s.mu.Unlock()
	if unsynced := errors.Join(appendErr, writeErr); unsynced != nil {
		p.Run.Version--
		return fmt.Errorf("jsonfile: committing run %s: %w", id, unsynced)
	}
	return nil
}

// notExisting returns nil when nothing is at path.
func notExisting(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return unloaded(path)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// unloaded is the error of a create over a run file the store did not load.
func unloaded(path string) error {
	return fmt.Errorf("%s exists but was not loaded (unreadable?): %w", path, store.ErrAlreadyExists)
}

// RunGet implements store.RunStore. A run file that exists but cannot be
// decoded is an error naming the file, not store.ErrNotFound.
func (s *Store) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if checkRunID(runID) != nil || !runNameFits(runID) {
		return nil, fmt.Errorf("jsonfile: run %q: %w", runID, store.ErrNotFound)
	}
	lk := s.stripe(runID)
	lk.RLock()
	defer lk.RUnlock()
	return s.loadRunLocked(runID)
}

// loadRunLocked returns a copy of the current state of a run, with its
// version. The caller holds the run's stripe.
func (s *Store) loadRunLocked(id string) (*durable.RunState, error) {
	path := s.runPath(id)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.forgetGoneLocked(id)
		return nil, fmt.Errorf("jsonfile: run %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("jsonfile: run %s: %w", id, err)
	}
	s.mu.RLock()
	meta := s.runs[id]
	s.mu.RUnlock()
	c, _ := s.cache.Get(id)
	if meta != nil && c != nil && c.mtime.Equal(fi.ModTime()) && c.size == fi.Size() && c.file == fileIDOf(fi) {
		return c.run.Thaw(), nil
	}
	r, err := s.readRunLocked(id, path)
	if err != nil {
		return nil, fmt.Errorf("jsonfile: reading run %s: %s is unreadable: %w", id, path, err)
	}
	return r, nil
}

// forgetGoneLocked drops run id from the metadata, the indexes and the
// cache when its file is gone, and reports whether the run is unknown to
// the store now (forgotten here or by another reader before): another
// process (Python serve --no-runner, a script, a user) deleted it, and
// the listings must agree with RunGet, as Python's do (they scan the run
// files). The file is looked at again under s.mu, so that a reader
// sharing the stripe that has just adopted a file put back there is not
// undone. The caller holds the run's stripe, shared or not; the store's
// own saves hold it exclusively and never leave the path empty (they
// exchange or rename over the file), so only a delete is seen here. The
// ledger file and its index are left alone, as RunDelete leaves them.
func (s *Store) forgetGoneLocked(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[id] == nil {
		return true
	}
	if _, err := os.Stat(s.runPath(id)); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	s.setLocked(id, nil)
	return true
}

// dropGone stats the files of runs ids and forgets those found gone
// (forgetGoneLocked); it reports whether any of them is unknown to the
// store now, whoever forgot it: a listing taken before holds a gone run
// (in the place of a live one) and must be made again.
func (s *Store) dropGone(ids []string) bool {
	dropped := false
	for _, id := range ids {
		if _, err := os.Stat(s.runPath(id)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		lk := s.stripe(id)
		lk.RLock()
		dropped = s.forgetGoneLocked(id) || dropped
		lk.RUnlock()
	}
	return dropped
}

// readRunLocked reads a run's file and makes the store's metadata and
// cache follow it: a file the store did not load is adopted at version 1,
// and one whose bytes are not those the store last wrote or read there
// (another process saved the run) is indexed anew at the next version, so
// that the listings agree with the state read and a commit of a state
// read before conflicts. Only the file still at the path once read is
// indexed, so that of two readers (the stripe is shared) of two foreign
// saves, the older cannot come last. The caller holds the run's stripe.
func (s *Store) readRunLocked(id, path string) (*durable.RunState, error) {
	for attempt := 1; ; attempt++ {
		r, data, fi, err := readRunFile(id, path)
		if err != nil {
			return nil, err
		}
		stamp, sum := stampOf(fi), appendSum(data)
		s.mu.Lock()
		meta := s.runs[id]
		if meta == nil || !meta.stamp.same(stamp) { // the index changes: only to the file at the path
			if now, err := os.Stat(path); attempt < 3 && (err != nil || !stamp.matches(now)) {
				s.mu.Unlock()
				continue // replaced again while read: read the newer one
			}
		}
		switch {
		case meta == nil:
			// Written by someone else since open: adopt it at version 1.
			meta = newMeta(r, 1)
		case meta.sum != sum:
			meta = newMeta(r, meta.version+1)
		default:
			// The same bytes (saved again, copied back): the same state.
			m := *meta
			meta = &m
		}
		meta.stamp, meta.sum = stamp, sum
		s.setLocked(id, meta)
		r.Version = meta.version
		s.cache.Put(id, &cachedRun{mtime: fi.ModTime(), size: fi.Size(), file: fileIDOf(fi), run: frozen.NewRun(r)}, fi.Size())
		s.mu.Unlock()
		return r, nil
	}
}

// loadMany loads the full states of metas (already filtered, sorted and
// limited), skipping runs deleted or made unreadable meanwhile.
func (s *Store) loadMany(metas []*runMeta) []*durable.RunState {
	out := make([]*durable.RunState, 0, len(metas))
	for _, m := range metas {
		id := m.stub.RunID
		lk := s.stripe(id)
		lk.RLock()
		r, err := s.loadRunLocked(id)
		lk.RUnlock()
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				s.log.Warn("skipping unreadable run", "run_id", id, "err", err)
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func byUpdatedDesc(a, b *runMeta) int {
	if c := b.stub.UpdatedAt.Compare(a.stub.UpdatedAt.Time); c != 0 {
		return c
	}
	return cmp.Compare(b.stub.RunID, a.stub.RunID)
}

// RunList implements store.RunStore from the in-memory indexes; only the
// returned runs are read from disk (or the cache).
func (s *Store) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var metas []*runMeta
	for _, m := range s.candidatesLocked(p) {
		if p.Matches(m.stub) {
			metas = append(metas, m)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(metas, byUpdatedDesc)
	// A run may change between the index snapshot and its load (another
	// process deleted or saved it): what is returned must match in the
	// state returned, and a run dropped so leaves its place to the next
	// candidate, as Python's scan reads on until it has limit runs (a short
	// page tells a caller paging through the listing that it is done).
	limit := store.EffectiveLimit(p.Limit)
	var out []*durable.RunState
	for len(metas) > 0 && len(out) < limit {
		batch := metas[:min(len(metas), limit-len(out))]
		metas = metas[len(batch):]
		for _, r := range s.loadMany(batch) {
			if p.Matches(r) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// RunListDue implements store.RunStore from the deadline index.
func (s *Store) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	// A run whose file another process deleted is not handed to the
	// scheduler (Python's list_due_wait_until scans the files): it is
	// dropped and the listing made again, so that it stays full (a short
	// one tells the scheduler no other run is due). One stat per run
	// listed; each pass that lists again has forgotten one run at least.
	for {
		s.mu.RLock()
		due := s.idx.due.ListDue(p.Now, store.EffectiveLimit(p.Limit))
		s.mu.RUnlock()
		ids := make([]string, len(due))
		for i, d := range due {
			ids[i] = d.RunID
		}
		if !s.dropGone(ids) {
			return due, nil
		}
	}
}

// RunNextDue implements store.RunStore.
func (s *Store) RunNextDue(ctx context.Context) (durable.Time, error) {
	if err := s.checkOpen(); err != nil {
		return durable.Time{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idx.due.Next(), nil
}

// RunListChildren implements store.RunStore from the parent index, oldest
// first (created_at, then run_id).
func (s *Store) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var metas []*runMeta
	for id := range s.idx.children[parentID] {
		if m := s.runs[id]; m != nil && (status == "" || m.stub.Status == status) {
			metas = append(metas, m)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(metas, func(a, b *runMeta) int {
		if c := a.stub.CreatedAt.Compare(b.stub.CreatedAt.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.stub.RunID, b.stub.RunID)
	})
	return slices.DeleteFunc(s.loadMany(metas), func(r *durable.RunState) bool {
		return status != "" && r.Status != status // changed since the snapshot
	}), nil
}

// RunIndex implements store.RunStore from the in-memory metadata, without
// reading run files (it stats those of the rows listed).
func (s *Store) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var metas []*runMeta
	for {
		s.mu.RLock()
		metas = metas[:0]
		for _, m := range s.runs {
			row := store.IndexRow(m.stub)
			if p.Matches(&row) {
				metas = append(metas, m)
			}
		}
		s.mu.RUnlock()
		slices.SortFunc(metas, byUpdatedDesc)
		metas = metas[:min(len(metas), store.EffectiveLimit(p.Limit))]
		// As RunListDue: a run whose file was deleted is not listed (nor
		// takes the place of one that is), as Python's scan of the files
		// does not list it.
		ids := make([]string, len(metas))
		for i, m := range metas {
			ids[i] = m.stub.RunID
		}
		if !s.dropGone(ids) {
			break
		}
	}
	rows := make([]store.RunIndexRow, len(metas))
	for i, m := range metas {
		rows[i] = store.IndexRow(m.stub)
		rows[i].RunLifecycle = pyjson.CloneObject(m.lifecycle)
	}
	return rows, nil
}

// RunDelete implements store.RunStore. The ledger file is kept.
func (s *Store) RunDelete(ctx context.Context, runID string) (bool, error) {
	if err := s.checkOpen(); err != nil {
		return false, err
	}
	if checkRunID(runID) != nil || !runNameFits(runID) {
		return false, nil
	}
	lk := s.stripe(runID)
	lk.Lock()
	defer lk.Unlock()
	if err := s.checkOpen(); err != nil { // again: Close may have run while this call waited
		return false, err
	}
	err := os.Remove(s.runPath(runID))
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("jsonfile: deleting run %s: %w", runID, err)
	}
	// Whether the run existed is the file's answer: an index entry for a
	// file another process deleted is stale (RunGet reports it not found).
	s.mu.Lock()
	s.setLocked(runID, nil)
	s.mu.Unlock()
	if existed {
		if err := s.syncDir(); err != nil {
			return true, fmt.Errorf("jsonfile: deleting run %s: %w", runID, err)
		}
	}
	return existed, nil
}

// idHead quotes the start of a long id: enough to find it in a log or a
// list without repeating hundreds of bytes.
func idHead(id string) string {
	const keep = 40
	if len(id) <= keep {
		return strconv.Quote(id)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return strconv.Quote(id[:cut]) + "…"
}
