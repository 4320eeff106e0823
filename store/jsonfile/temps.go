package jsonfile

import "github.com/abstractframework/abstractgateway/internal/atomicfile"

// tempTargets are the names of the files the store writes through a temp
// file and a rename (atomicfile.Write, and Recycler.Replace's fallback to
// it): run files, cursors, the command counter and the command log that
// CommandDeleteByRun rewrites. A run file needs an id (checkID refuses an
// empty one).
var tempTargets = []string{"run_?*.json", "commands_cursor*.json", seqFile, commandsFile}

// removeStaleTemps removes the temps of tempTargets that killed writes
// left, once older than atomicfile.StaleTempAge.
//
// The flock keeps any other store of ours out of the directory, so none
// of our own writes is in flight at open. But Python's stores take no
// lock and name their temps exactly as atomicfile does
// (<target>.<uuid4 hex>.tmp: JsonFileRunStore.save,
// JsonFileCommandCursorStore.save, JsonlCommandStore.delete_by_run), so a
// young temp may be a Python process's write in progress.
func (s *Store) removeStaleTemps() {
	atomicfile.RemoveStaleTemps(s.dir, tempTargets, s.log)
}
