package jsonfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// staleTempAge is how old (by modification time) a temp file of one of
// the store's targets must be before the store, at open, takes it for
// the leftover of a killed write and removes it.
//
// The flock keeps any other store of ours out of the directory, so none
// of our own writes is in flight at open. But Python's stores take no
// lock and name their temps exactly as atomicfile does
// (<target>.<uuid4 hex>.tmp: JsonFileRunStore.save,
// JsonFileCommandCursorStore.save, JsonlCommandStore.delete_by_run), and
// our random suffix cannot be told from a uuid4's. A young temp may thus
// be a Python process's write between its create and its rename, and
// removing it would fail that write. Such a write creates, fills and
// renames its temp at once (milliseconds; longer only for a rewrite of a
// large commands.jsonl), so a temp untouched for 10 minutes is nobody's
// any more. The Python runtime's docs promise the same 10-minute bound
// for sweeping its temps (spec §4.3, "docs only": its code never sweeps).
const staleTempAge = 10 * time.Minute

// tempTargets are the names of the files the store writes through a temp
// file and a rename (atomicfile.Write, and Recycler.Replace's fallback to
// it): run files, cursors, the command counter and the command log that
// CommandDeleteByRun rewrites. A run file needs an id (checkID refuses an
// empty one).
var tempTargets = []string{"run_?*.json", "commands_cursor*.json", seqFile, commandsFile}

// removeStaleTemps removes the temp files that writes killed before
// their rename left in the directory: files named <target>.<32 hex>.tmp
// for one of tempTargets, older than staleTempAge. Each removal is
// logged; a failure to list or remove is logged too and does not fail
// the open, as a leftover temp harms nothing but the directory's size.
func (s *Store) removeStaleTemps() {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.log.Warn("not removing leftover temp files: listing the directory failed", "dir", s.dir, "err", err)
		return
	}
	now := time.Now()
	for _, e := range entries {
		// Only a regular file: a directory or a symlink of that name is
		// not one our writes make.
		if !e.Type().IsRegular() || !isTempOfTarget(e.Name()) {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed or removed since the listing
		}
		if err != nil {
			s.log.Warn("not removing a leftover temp file", "file", path, "err", err)
			continue
		}
		// A future mtime (a clock set back) is not old either.
		if age := now.Sub(fi.ModTime()); age < staleTempAge {
			continue
		}
		if err := os.Remove(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				s.log.Warn("removing a leftover temp file failed", "file", path, "err", err)
			}
			continue
		}
		s.log.Info("removed the temp file of a write interrupted before its rename", "file", path, "modified", fi.ModTime())
	}
}

// isTempOfTarget reports whether name is the temp file name of a write
// to one of tempTargets.
func isTempOfTarget(name string) bool {
	target, ok := atomicfile.TempTarget(name)
	if !ok {
		return false
	}
	for _, pattern := range tempTargets {
		if ok, _ := filepath.Match(pattern, target); ok {
			return true
		}
	}
	return false
}
