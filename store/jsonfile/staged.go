package jsonfile

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// A terminal commit (one that ends a run) is made in three steps: its
// state is staged under
// .commit-<run id>.<ledger size>-<size after>-<sum>.<run size>-<run sum>.tmp
// (sum: FNV-1a of the bytes to append; run size and run sum: the size and
// FNV-1a of run_<id>.json then), its records are appended to the ledger,
// then the staged file is put in place of run_<id>.json. A process killed
// between the append and the last step leaves the terminal records
// without the state they end; Python's store (and ours before staging)
// then replays the run from its last checkpoint, and a replay that ends
// otherwise (a cancel arrived, a failed effect succeeds the second time)
// gives the ledger two terminal records of different statuses. The staged
// name lets the next open finish the commit instead: the ledger's size and
// the sum of its last bytes say whether the records landed whole, and
// nothing else since; the run file's size and sum whether it still holds
// what the commit replaces, or another process (Python) saved the run
// since. Content, because neither file times (a save within one timestamp
// tick, a clock stepped back) nor inode numbers (a directory copied or
// restored gets new ones; ext4 hands a freed one out again at the next
// save) can say. A save of the same bytes counts as none: it leaves what
// the commit replaces.
//
// Names written before this form end at <sum> (judged by file times) or
// carry the run file's inode number instead (.<ino>: judged by it); both
// are still recovered as they were. Ours lack the run file's field where
// the run file cannot be read or the longer name does not fit.
const stagedPattern = ".commit-*.tmp"

// maxNameLen is the longest file name most file systems accept; a run id
// too long for a staged name is committed unstaged.
const maxNameLen = 255

// stagedCommit is what a staged name says: the ledger's size before the
// commit's records, its size after them, and their sum.
type stagedCommit struct {
	id          string
	size, after int64
	sum         uint64
}

// stagedName is a staged name without a run file field: the format of
// earlier releases, and ours where the run file cannot be read or a
// longer name does not fit.
func stagedName(id string, size int64, appended []byte) string {
	return stagedStem(id, size, appended) + ".tmp"
}

// stagedNameFor is a staged name recording ino, the inode number of the
// run file the commit replaces: the form written before
// stagedNameWithContent's, still recovered.
func stagedNameFor(id string, size int64, appended []byte, ino uint64) string {
	return stagedStem(id, size, appended) + "." + strconv.FormatUint(ino, 10) + ".tmp"
}

func stagedStem(id string, size int64, appended []byte) string {
	return string(appendStagedStem(nil, id, size, appended))
}

// appendStagedStem appends the part of a staged name before the run
// file's field to b.
func appendStagedStem(b []byte, id string, size int64, appended []byte) []byte {
	b = append(append(append(b, ".commit-"...), id...), '.')
	b = append(strconv.AppendInt(b, size, 10), '-')
	b = append(strconv.AppendInt(b, size+int64(len(appended)), 10), '-')
	return strconv.AppendUint(b, appendSum(appended), 16)
}

// stagedNameWithContent is a staged name recording the size and sum of
// the run file the commit replaces: the format this release writes.
func stagedNameWithContent(id string, size int64, appended []byte, runSize int64, runSum uint64) string {
	var buf [maxNameLen + 1]byte // room for any name that can be used
	b := append(appendStagedStem(buf[:0], id, size, appended), '.')
	b = append(strconv.AppendInt(b, runSize, 10), '-')
	b = append(strconv.AppendUint(b, runSum, 16), ".tmp"...)
	return string(b)
}

// stagedNameOf names the staging of a commit of run id, whose file is at
// path: with the run file's size and sum when it can be read and the name
// fits maxNameLen, else without (a run whose name fits only without them
// is still staged, judged at recovery by file times as before). An empty
// name means the run is committed unstaged.
func (s *Store) stagedNameOf(id, path string, size int64, appended []byte) string {
	if size < 0 {
		return ""
	}
	if runSize, runSum, ok := s.runFileSum(id, path); ok {
		if name := stagedNameWithContent(id, size, appended, runSize, runSum); len(name) <= maxNameLen {
			return name
		}
	}
	if name := stagedName(id, size, appended); len(name) <= maxNameLen {
		return name
	}
	return ""
}

// runFileSum returns the size and sum of the run file at path. The sum
// this store took of the bytes it last wrote there is used while the
// file is still the one it wrote (as the cache judges it: same
// modification time, size and file); otherwise the file is read.
func (s *Store) runFileSum(id, path string) (int64, uint64, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, false
	}
	if c, _ := s.cache.Get(id); c != nil && c.summed && c.mtime.Equal(fi.ModTime()) &&
		c.size == fi.Size() && c.file == fileIDOf(fi) {
		return c.size, c.sum, true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	return int64(len(data)), appendSum(data), true
}

// appendSum is the FNV-1a (64-bit) of b, as hash/fnv's New64a gives it,
// computed without the allocation of that hash: a commit sums every run
// file it writes.
func appendSum(b []byte) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}

// parseStagedName reads back what stagedName, stagedNameFor or
// stagedNameWithContent wrote (stagedIno and stagedRunContent read the
// run file's field of the latter two).
func parseStagedName(name string) (c stagedCommit, ok bool) {
	rest, ok1 := strings.CutPrefix(name, ".commit-")
	rest, ok2 := strings.CutSuffix(rest, ".tmp")
	rest, _ = cutRunField(rest)
	i := strings.LastIndexByte(rest, '.')
	if !ok1 || !ok2 || i <= 0 {
		return c, false
	}
	fields := strings.Split(rest[i+1:], "-")
	if len(fields) != 3 {
		return c, false
	}
	size, err1 := strconv.ParseInt(fields[0], 10, 64)
	after, err2 := strconv.ParseInt(fields[1], 10, 64)
	sum, err3 := strconv.ParseUint(fields[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil || size < 0 || after < size {
		return c, false
	}
	c = stagedCommit{id: rest[:i], size: size, after: after, sum: sum}
	return c, checkRunID(c.id) == nil
}

// stagedIno returns the run file's inode number a staged name of the
// earlier form (stagedNameFor) records, and false for a name without one.
func stagedIno(name string) (ino uint64, ok bool) {
	_, f := cutRunField(strings.TrimSuffix(name, ".tmp"))
	return f.ino, f.kind == runFieldIno
}

// stagedRunContent returns the run file's size and sum a staged name
// records, and false for a name without them.
func stagedRunContent(name string) (size int64, sum uint64, ok bool) {
	_, f := cutRunField(strings.TrimSuffix(name, ".tmp"))
	return f.size, f.sum, f.kind == runFieldContent
}

// runField is what a staged name says of the run file the commit
// replaces.
type runField struct {
	kind int // runFieldNone, runFieldIno or runFieldContent
	ino  uint64
	size int64
	sum  uint64
}

const (
	runFieldNone    = iota // judged by file times
	runFieldIno            // .<ino>, the earlier form: its inode number
	runFieldContent        // .<size>-<sum>: its size and FNV-1a
)

// cutRunField cuts a trailing run file field off a staged name without
// its .tmp. The field before it (<size>-<size after>-<sum>) always holds
// two '-', an inode number none and the size and sum one, so no form is
// taken for another.
func cutRunField(rest string) (string, runField) {
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return rest, runField{}
	}
	field := rest[i+1:]
	if sizeText, sumText, ok := strings.Cut(field, "-"); ok {
		size, err1 := strconv.ParseInt(sizeText, 10, 64)
		sum, err2 := strconv.ParseUint(sumText, 16, 64)
		if err1 != nil || err2 != nil || size < 0 {
			return rest, runField{}
		}
		return rest[:i], runField{kind: runFieldContent, size: size, sum: sum}
	}
	ino, err := strconv.ParseUint(field, 10, 64)
	if err != nil {
		return rest, runField{}
	}
	return rest[:i], runField{kind: runFieldIno, ino: ino}
}

// promote puts a staged run file in place of path. When that fails with
// the run file unchanged, the commit is undone whole: the records it
// appended are cut off the ledger (it was size before them), then the
// staged file is dropped, in the order unstage keeps and for its reason.
func (s *Store) promote(id, staged, path string, size int64, records []*durable.StepRecord) error {
	err := s.spares.Promote(staged, path)
	if err == nil {
		return nil
	}
	s.dirUnsynced.Store(true)
	if errors.Is(err, atomicfile.ErrUnsynced) {
		return err // in place: the records belong to it
	}
	s.killPointForTest("promote failed")
	return errors.Join(err, s.unstage(id, staged, size, records))
}

// unstage abandons a staged commit whose append or promote failed: the
// ledger is cut back to its size before the append (a part of it may have
// landed), then the staged file is dropped, in that order, so that a kill
// in between leaves a staged name the next open drops too (its records
// are no longer in the ledger); the reverse order would leave records
// without the state they end, and nothing to finish them with. For the
// same reason a cut that fails keeps the staged name: the records may
// still be in the ledger, and the next open judges them as after a crash
// (finishing the commit if they landed whole, cutting them off if not).
// Once the cut is done, the records lose the Seq the append gave them:
// they are not in the ledger, as after an append that failed, and a
// caller (observe) takes a Seq to mean the record was appended.
func (s *Store) unstage(id, staged string, size int64, records []*durable.StepRecord) error {
	if err := s.cutLedger(id, size); err != nil {
		return fmt.Errorf("%w (%s kept for the next open to finish or undo)", err, filepath.Base(staged))
	}
	for _, r := range records {
		r.Seq = 0
	}
	s.spares.Unstage(staged)
	return nil
}

// cutLedger truncates a run's ledger to size and forgets its index.
func (s *Store) cutLedger(id string, size int64) error {
	defer s.forgetLedger(id)
	f, err := atomicfile.OpenFile(s.ledgerPath(id), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cutting an undone commit's records off the ledger: %w", err)
	}
	err = f.Truncate(size)
	if err == nil && !s.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cutting an undone commit's records off the ledger: %w", err)
	}
	return nil
}

// recoverStaged settles the terminal commits a crash interrupted, before
// the run files are read: a commit whose records all landed is finished
// (its staged state replaces the run file), one whose records did not is
// undone (a part of them that landed, ending in a torn line, is cut off
// the ledger; whole lines may be another process's), and a staged
// name left after the commit finished is removed. A file it cannot read
// (EIO, EMFILE) fails the open and leaves the staged name for the next
// one: only what was read can say that a commit is to be dropped.
func (s *Store) recoverStaged() error {
	paths, err := atomicfile.Glob(s.dir, stagedPattern)
	if err != nil {
		return fmt.Errorf("jsonfile: listing staged commits: %w", err)
	}
	for _, staged := range paths {
		if err := s.recoverStagedCommit(staged); err != nil {
			return fmt.Errorf("jsonfile: recovering %s: %w", filepath.Base(staged), err)
		}
	}
	if len(paths) > 0 {
		return s.syncDir()
	}
	return nil
}

func (s *Store) recoverStagedCommit(staged string) error {
	c, ok := parseStagedName(filepath.Base(staged))
	if !ok {
		s.log.Warn("removing a file named like a staged commit that is not one", "file", staged)
		return removeFile(staged)
	}
	ledger := s.ledgerPath(c.id)
	var size int64
	switch fi, err := os.Stat(ledger); {
	case err == nil:
		size = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	path := s.runPath(c.id)
	switch {
	case size > c.size && size < c.after:
		// A part of the records may have landed (a kill or power loss
		// mid-append), or another process (Python, which takes no lock)
		// appended its own records since. Only a ledger ending in a torn
		// line is taken for the former: another process's append ends in
		// whole lines, and a run saved since says it used the directory.
		// The staged name's sum covers the whole append, so no prefix of
		// it can be checked; whole lines are left, whoever wrote them
		// (ours, a strict prefix, lack the terminal record, which is last).
		torn, err := endsTorn(ledger, size)
		if err != nil {
			return err
		}
		since := false
		if torn {
			if since, err = savedSince(path, staged); err != nil {
				return err
			}
		}
		if !torn || since {
			s.log.Warn("leaving a ledger another process may have appended to after an interrupted terminal commit",
				"run_id", c.id, "file", ledger)
			return removeFile(staged)
		}
		// Cut and synced before the staged name goes: a power loss in
		// between would bring the part back with nothing left to judge it.
		if err := s.cutLedger(c.id, c.size); err != nil {
			return err
		}
		s.log.Warn("cut the part of an interrupted terminal commit's records off a ledger",
			"run_id", c.id, "file", ledger, "bytes", size-c.size)
		return removeFile(staged)
	case size != c.after:
		// The records did not land: the commit did not happen.
		return removeFile(staged)
	}
	switch match, err := appendedMatch(ledger, c); {
	case err != nil:
		return err
	case !match:
		// The ledger holds other records since: the commit was overtaken.
		return removeFile(staged)
	}
	// A run file that is missing or does not decode is replaced, as
	// before; one that cannot be read is judged by the next open.
	switch data, err := os.ReadFile(path); {
	case err == nil:
		if cur, err := decodeRunFile(c.id, data); err == nil && cur.Status.Terminal() {
			// Put in place already: the staged name holds the state it displaced.
			return removeFile(staged)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("reading the run file: %w", err)
	}
	since, err := savedSince(path, staged)
	if err != nil {
		return err
	}
	if since {
		s.log.Warn("leaving a run another process saved after an interrupted terminal commit", "run_id", c.id)
		return removeFile(staged)
	}
	data, err := os.ReadFile(staged)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // gone: nothing to finish or drop
	case err != nil:
		return fmt.Errorf("reading the staged commit: %w", err)
	}
	if r, err := decodeRunFile(c.id, data); err != nil || !r.Status.Terminal() {
		s.log.Warn("removing an unreadable staged commit", "file", staged, "err", err)
		return removeFile(staged)
	}
	if err := os.Rename(staged, path); err != nil {
		return err
	}
	s.log.Info("finished a terminal commit a crash interrupted", "run_id", c.id)
	return nil
}

// endsTorn reports whether the ledger, of size bytes (> 0), ends in a
// torn line: its last byte is not '\n'.
func endsTorn(ledger string, size int64) (bool, error) {
	f, err := os.Open(ledger)
	if err != nil {
		return false, fmt.Errorf("reading the ledger: %w", err)
	}
	defer f.Close()
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return false, fmt.Errorf("reading the ledger: %w", err)
	}
	return last[0] != '\n', nil
}

// appendedMatch reports whether the ledger's bytes from c.size to c.after
// are the ones the staged commit appended. A missing ledger holds none of
// them; an error reading it is returned, for it says nothing of them.
func appendedMatch(ledger string, c stagedCommit) (bool, error) {
	f, err := os.Open(ledger)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the ledger: %w", err)
	}
	defer f.Close()
	h := fnv.New64a()
	if _, err := io.Copy(h, io.NewSectionReader(f, c.size, c.after-c.size)); err != nil {
		return false, fmt.Errorf("reading the ledger: %w", err)
	}
	return h.Sum64() == c.sum, nil // a ledger shorter since reads short: no match
}

// savedSince reports whether the run file was saved since the commit was
// staged. A staged name recording the run file's size and sum is judged
// by them: the run file holds other bytes now (a save of the same bytes
// changes nothing the recovery could undo). One recording its inode
// number (the earlier form) is judged by it: another file at runFile now
// was saved since. A name without either leaves only file times: the run
// file written after the staged one (a staged file is written just before
// its commit's append), which misses a save within the staging's
// timestamp tick and takes a run saved before the clock stepped back for
// one saved since. A missing run file was not saved since; an error
// reading one (or the staged file's times) is returned, undecided.
func savedSince(runFile, staged string) (bool, error) {
	r, err := os.Stat(runFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the run file: %w", err)
	}
	name := filepath.Base(staged)
	if size, sum, ok := stagedRunContent(name); ok {
		if r.Size() != size {
			return true, nil
		}
		data, err := os.ReadFile(runFile)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // removed since the stat: not saved
		}
		if err != nil {
			return false, fmt.Errorf("reading the run file: %w", err)
		}
		return int64(len(data)) != size || appendSum(data) != sum, nil
	}
	if ino, ok := stagedIno(name); ok {
		if id := fileIDOf(r); id != (fileID{}) {
			return id.ino != ino, nil
		}
	}
	st, err := os.Stat(staged)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the staged commit's times: %w", err)
	}
	return r.ModTime().After(st.ModTime()), nil
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// killPointForTest lets a test end the process at a named point of a
// commit.
func (s *Store) killPointForTest(point string) {
	if s.killForTest != nil {
		s.killForTest(point)
	}
}
