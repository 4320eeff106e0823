package jsonfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// A terminal commit (one that ends a run) is made in three steps: its
// state is staged under .commit-<run id>.<ledger size>-<size after>.tmp,
// its records are appended to the ledger, then the staged file is put in
// place of run_<id>.json. A process killed between the append and the
// last step leaves the terminal records without the state they end;
// Python's store (and ours before staging) then replays the run from its
// last checkpoint, and a replay that ends otherwise (a cancel arrived, a
// failed effect succeeds the second time) gives the ledger two terminal
// records of different statuses. The staged name lets the next open
// finish the commit instead: the ledger's size says whether the records
// landed whole.
const stagedPattern = ".commit-*.tmp"

// maxNameLen is the longest file name most file systems accept; a run id
// too long for a staged name is committed unstaged.
const maxNameLen = 255

func stagedName(id string, size, after int64) string {
	return ".commit-" + id + "." + strconv.FormatInt(size, 10) + "-" + strconv.FormatInt(after, 10) + ".tmp"
}

// parseStagedName reads back what stagedName wrote.
func parseStagedName(name string) (id string, size, after int64, ok bool) {
	rest, ok1 := strings.CutPrefix(name, ".commit-")
	rest, ok2 := strings.CutSuffix(rest, ".tmp")
	i := strings.LastIndexByte(rest, '.')
	if !ok1 || !ok2 || i <= 0 {
		return "", 0, 0, false
	}
	a, b, ok3 := strings.Cut(rest[i+1:], "-")
	size, err1 := strconv.ParseInt(a, 10, 64)
	after, err2 := strconv.ParseInt(b, 10, 64)
	if !ok3 || err1 != nil || err2 != nil || size < 0 || after < size {
		return "", 0, 0, false
	}
	id = rest[:i]
	if checkID("run", id) != nil {
		return "", 0, 0, false
	}
	return id, size, after, true
}

// promote puts a staged run file in place of path.
func (s *Store) promote(staged, path string) error {
	err := s.spares.Promote(staged, path)
	if err != nil {
		s.dirUnsynced.Store(true)
	}
	return err
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
	id, before, after, ok := parseStagedName(filepath.Base(staged))
	if !ok {
		s.log.Warn("removing a file named like a staged commit that is not one", "file", staged)
		return removeFile(staged)
	}
	ledger := s.ledgerPath(id)
	var size int64
	switch fi, err := os.Lstat(ledger); {
	case err == nil:
		size = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if size < after {
		// The records did not land whole, so the commit did not happen.
		if size > before {
			if err := os.Truncate(ledger, before); err != nil {
				return fmt.Errorf("cutting a partial append off %s: %w", ledger, err)
			}
			s.log.Warn("cut the part of an interrupted terminal commit's records off a ledger",
				"run_id", id, "file", ledger, "bytes", size-before)
		}
		return removeFile(staged)
	}
	path := s.runPath(id)
	if cur, err := s.readRunFile(id, path); err == nil && cur.Status.Terminal() {
		// Put in place already: the staged name holds the state it displaced.
		return removeFile(staged)
	}
	if r, err := s.readRunFile(id, staged); err != nil || !r.Status.Terminal() {
		s.log.Warn("removing an unreadable staged commit", "file", staged, "err", err)
		return removeFile(staged)
	}
	if err := os.Rename(staged, path); err != nil {
		return err
	}
	s.log.Info("finished a terminal commit a crash interrupted", "run_id", id)
	return nil
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
