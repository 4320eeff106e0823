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

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// A terminal commit (one that ends a run) is made in three steps: its
// state is staged under
// .commit-<run id>.<ledger size>-<size after>-<sum>.<ino>.tmp
// (sum: FNV-1a of the bytes to append; ino: the inode number of
// run_<id>.json then), its records are appended to the ledger, then the
// staged file is put in place of run_<id>.json. A process killed between
// the append and the last step leaves the terminal records without the
// state they end; Python's store (and ours before staging) then replays
// the run from its last checkpoint, and a replay that ends otherwise (a
// cancel arrived, a failed effect succeeds the second time) gives the
// ledger two terminal records of different statuses. The staged name lets
// the next open finish the commit instead: the ledger's size and the sum
// of its last bytes say whether the records landed whole, and nothing
// else since; the inode number whether the run file is still the one the
// commit replaces (Python saves by os.replace, a new file), which file
// times cannot say (a save within one timestamp tick, a clock stepped
// back). Earlier releases' names, and ours where no inode number is
// known or the longer name does not fit, lack the .<ino> field.
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

// stagedName is a staged name without the run file's inode number: the
// format of earlier releases.
func stagedName(id string, size int64, appended []byte) string {
	return stagedStem(id, size, appended) + ".tmp"
}

// stagedNameFor is a staged name recording ino, the inode number of the
// run file the commit replaces.
func stagedNameFor(id string, size int64, appended []byte, ino uint64) string {
	return stagedStem(id, size, appended) + "." + strconv.FormatUint(ino, 10) + ".tmp"
}

func stagedStem(id string, size int64, appended []byte) string {
	return ".commit-" + id + "." + strconv.FormatInt(size, 10) + "-" +
		strconv.FormatInt(size+int64(len(appended)), 10) + "-" + strconv.FormatUint(appendSum(appended), 16)
}

// stagedNameOf names the staging of a commit of run id, whose file is at
// path: with the run file's inode number when it is known and the name
// fits maxNameLen, else without (a run whose name fits only without it
// is still staged, judged at recovery by file times as before). An empty
// name means the run is committed unstaged.
func stagedNameOf(id, path string, size int64, appended []byte) string {
	if size < 0 {
		return ""
	}
	if fi, err := os.Stat(path); err == nil {
		if ino := fileIDOf(fi).ino; ino != 0 {
			if name := stagedNameFor(id, size, appended, ino); len(name) <= maxNameLen {
				return name
			}
		}
	}
	if name := stagedName(id, size, appended); len(name) <= maxNameLen {
		return name
	}
	return ""
}

func appendSum(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// parseStagedName reads back what stagedName or stagedNameFor wrote
// (stagedIno reads the inode number of the latter).
func parseStagedName(name string) (c stagedCommit, ok bool) {
	rest, ok1 := strings.CutPrefix(name, ".commit-")
	rest, ok2 := strings.CutSuffix(rest, ".tmp")
	rest, _, _ = cutIno(rest)
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
	return c, checkID("run", c.id) == nil
}

// stagedIno returns the run file's inode number a staged name records,
// and false for a name without one.
func stagedIno(name string) (ino uint64, ok bool) {
	_, ino, ok = cutIno(strings.TrimSuffix(name, ".tmp"))
	return ino, ok
}

// cutIno cuts a trailing .<ino> field off a staged name without its
// .tmp. The field before it (<size>-<size after>-<sum>) always holds a
// '-', so a name without the field is never taken for one with it.
func cutIno(rest string) (string, uint64, bool) {
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return rest, 0, false
	}
	ino, err := strconv.ParseUint(rest[i+1:], 10, 64)
	if err != nil {
		return rest, 0, false
	}
	return rest[:i], ino, true
}

// promote puts a staged run file in place of path. When that fails with
// the run file unchanged, the records the commit appended are cut off the
// ledger (it was size before them), so the commit is undone whole.
func (s *Store) promote(id, staged, path string, size int64) error {
	err := s.spares.Promote(staged, path)
	if err == nil {
		return nil
	}
	s.dirUnsynced.Store(true)
	if errors.Is(err, atomicfile.ErrUnsynced) {
		return err // in place: the records belong to it
	}
	return errors.Join(err, s.cutLedger(id, size))
}

// unstage abandons a staged commit whose append failed: the ledger is cut
// back to its size before the append (a part of it may have landed), then
// the staged file is dropped, in that order, so that a kill in between
// leaves a staged name the next open drops too.
func (s *Store) unstage(id, staged string, size int64) error {
	err := s.cutLedger(id, size)
	s.spares.Unstage(staged)
	return err
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
// undone (a part of them that landed is cut off the ledger), and a staged
// name left after the commit finished is removed.
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
		// A part of the records landed (a power loss mid-append): cut it
		// off, unless the run was saved since the staging (another
		// process, Python say, used the directory meanwhile and the
		// bytes may be its own).
		if savedSince(path, staged) {
			s.log.Warn("leaving a ledger another process wrote after an interrupted terminal commit", "run_id", c.id)
			return removeFile(staged)
		}
		if err := os.Truncate(ledger, c.size); err != nil {
			return fmt.Errorf("cutting a partial append off %s: %w", ledger, err)
		}
		s.log.Warn("cut the part of an interrupted terminal commit's records off a ledger",
			"run_id", c.id, "file", ledger, "bytes", size-c.size)
		return removeFile(staged)
	case size != c.after || !s.appendedMatch(ledger, c):
		// The records did not land, or the ledger holds other records
		// since: the commit did not happen, or was overtaken.
		return removeFile(staged)
	}
	if cur, err := s.readRunFile(c.id, path); err == nil && cur.Status.Terminal() {
		// Put in place already: the staged name holds the state it displaced.
		return removeFile(staged)
	}
	if savedSince(path, staged) {
		s.log.Warn("leaving a run another process saved after an interrupted terminal commit", "run_id", c.id)
		return removeFile(staged)
	}
	if r, err := s.readRunFile(c.id, staged); err != nil || !r.Status.Terminal() {
		s.log.Warn("removing an unreadable staged commit", "file", staged, "err", err)
		return removeFile(staged)
	}
	if err := os.Rename(staged, path); err != nil {
		return err
	}
	s.log.Info("finished a terminal commit a crash interrupted", "run_id", c.id)
	return nil
}

// appendedMatch reports whether the ledger's bytes from c.size to c.after
// are the ones the staged commit appended.
func (s *Store) appendedMatch(ledger string, c stagedCommit) bool {
	f, err := os.Open(ledger)
	if err != nil {
		return false
	}
	defer f.Close()
	h := fnv.New64a()
	if _, err := io.Copy(h, io.NewSectionReader(f, c.size, c.after-c.size)); err != nil {
		return false
	}
	return h.Sum64() == c.sum
}

// savedSince reports whether the run file was saved since the commit was
// staged. A staged name recording the run file's inode number is judged
// by it: another file at runFile now was saved since (Python saves by
// os.replace, a new file; nothing of ours replaces the run file between
// the staging and the kill this recovers from). A name without one leaves
// only file times: the run file written after the staged one (a staged
// file is written just before its commit's append), which misses a save
// within the staging's timestamp tick and takes a run saved before the
// clock stepped back for one saved since.
func savedSince(runFile, staged string) bool {
	r, err := os.Stat(runFile)
	if err != nil {
		return false
	}
	if ino, ok := stagedIno(filepath.Base(staged)); ok {
		if id := fileIDOf(r); id != (fileID{}) {
			return id.ino != ino
		}
	}
	st, err := os.Stat(staged)
	return err == nil && r.ModTime().After(st.ModTime())
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
