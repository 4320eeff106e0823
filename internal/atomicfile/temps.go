package atomicfile

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// StaleTempAge is how old (by modification time) a temp file must be
// before RemoveStaleTemps takes it for the leftover of a killed write.
//
// The Python runtime names its temps as Write does and our random suffix
// cannot be told from its uuid4, and a directory may be shared with
// processes that take no lock: a young temp may be a live write between
// its create and its rename, and removing it would fail that write. Such
// a write creates, fills and renames its temp at once (milliseconds;
// longer only for a large file), so a temp untouched for 10 minutes is
// nobody's any more. The Python runtime's docs promise the same 10-minute
// bound for sweeping its temps (spec §4.3, "docs only": its code never
// sweeps).
const StaleTempAge = 10 * time.Minute

// RemoveStaleTemps removes the temp files that writes killed before their
// rename left in dir: regular files named <target>.<32 hex>.tmp
// (TempTarget) whose target matches one of targets (filepath.Match
// patterns), last modified StaleTempAge or longer ago. Each removal is
// logged; a failure to list or remove is logged too and otherwise
// ignored, as a leftover temp harms nothing but the directory's size. A
// nil log discards.
func RemoveStaleTemps(dir string, targets []string, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		log.Warn("not removing leftover temp files: listing the directory failed", "dir", dir, "err", err)
		return
	}
	now := time.Now()
	for _, e := range entries {
		// Only a regular file: a directory or a symlink of that name is
		// not one our writes make.
		if !e.Type().IsRegular() || !isTempOf(e.Name(), targets) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed or removed since the listing
		}
		if err != nil {
			log.Warn("not removing a leftover temp file", "file", path, "err", err)
			continue
		}
		// A future mtime (a clock set back) is not old either.
		if age := now.Sub(fi.ModTime()); age < StaleTempAge {
			continue
		}
		if err := os.Remove(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				log.Warn("removing a leftover temp file failed", "file", path, "err", err)
			}
			continue
		}
		log.Info("removed the temp file of a write interrupted before its rename", "file", path, "modified", fi.ModTime())
	}
}

// isTempOf reports whether name is the temp file name of a write to a
// file matching one of targets.
func isTempOf(name string, targets []string) bool {
	target, ok := TempTarget(name)
	if !ok {
		return false
	}
	for _, pattern := range targets {
		if ok, _ := filepath.Match(pattern, target); ok {
			return true
		}
	}
	return false
}
