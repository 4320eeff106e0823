package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// JSONStore keeps one <dir>/snapshot_<id>.json file per snapshot (indent
// 2, non-ASCII raw), the layout of the Python JsonSnapshotStore. Unlike
// Python, which writes the file in place, Save writes a synced temp file
// and renames it over the target, so a crash never leaves a half-written
// snapshot, and Save and Delete sync the directory, so the change also
// survives a power loss.
type JSONStore struct {
	// NowFunc is the clock for CreatedAt/UpdatedAt; nil means time.Now.
	NowFunc func() time.Time

	dir string
	// syncDir makes the directory's entries durable (atomicfile.SyncDir;
	// tests watch it): a saved or deleted snapshot then survives a power
	// loss, not only a process kill.
	syncDir func(dir string) error
}

var _ Store = (*JSONStore)(nil)

// snapshotTargets names the files Save writes through a temp file: a
// snapshot file needs an id (path refuses an empty one).
var snapshotTargets = []string{"snapshot_?*.json"}

// JSONConfig configures NewJSONConfig.
type JSONConfig struct {
	// Dir is the snapshot directory, created (with parents) when missing.
	Dir string
	// Logger receives a line for each leftover temp file removed at open
	// and a warning when that fails. Default: discarded.
	Logger *slog.Logger
}

// NewJSON returns a store over dir, created (with parents) when missing;
// it is NewJSONConfig with no logger.
func NewJSON(dir string) (*JSONStore, error) {
	return NewJSONConfig(JSONConfig{Dir: dir})
}

// NewJSONConfig returns a store over cfg.Dir, created (with parents) when
// missing. It removes the temp files of snapshot saves killed before
// their rename once they are atomicfile.StaleTempAge old: the store takes
// no lock, so a younger one may be another process's save in progress.
func NewJSONConfig(cfg JSONConfig) (*JSONStore, error) {
	if cfg.Dir == "" {
		return nil, errors.New("snapshot: dir is required")
	}
	// 0777 here and 0666 in Save, under the umask, as Python's mkdir and
	// open give: a group-shared dir stays writable by the group.
	if err := os.MkdirAll(cfg.Dir, 0o777); err != nil {
		return nil, fmt.Errorf("snapshot: creating dir: %w", err)
	}
	log := cfg.Logger
	if log != nil {
		log = log.WithGroup("snapshot")
	}
	atomicfile.RemoveStaleTemps(cfg.Dir, snapshotTargets, log)
	return &JSONStore{dir: cfg.Dir, syncDir: atomicfile.SyncDir}, nil
}

// path returns the file of a snapshot, refusing ids that would escape the
// directory, and ids that are not UTF-8: the file holds the id written
// with U+FFFD in their place, which List would return and no Load or
// Delete could find, and two such ids would list the same.
func (j *JSONStore) path(id string) (string, error) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\\\x00") {
		return "", fmt.Errorf("snapshot: invalid snapshot id %q", id)
	}
	if !utf8.ValidString(id) {
		return "", fmt.Errorf("snapshot: invalid snapshot id %q: not UTF-8", id)
	}
	return filepath.Join(j.dir, "snapshot_"+id+".json"), nil
}

// Save implements Store.
func (j *JSONStore) Save(ctx context.Context, s *durable.Snapshot) error {
	if err := prepare(s, j.NowFunc); err != nil {
		return err
	}
	path, err := j.path(s.SnapshotID)
	if err != nil {
		return err
	}
	data, err := pyjson.Marshal(s.JSONValue(), pyjson.Pretty)
	if err != nil {
		return fmt.Errorf("snapshot: encoding %s: %w", s.SnapshotID, err)
	}
	if err := atomicfile.Write(path, data, atomicfile.Options{Perm: 0o666}); err != nil {
		return fmt.Errorf("snapshot: saving %s: %w", s.SnapshotID, err)
	}
	if err := j.syncDir(j.dir); err != nil {
		return fmt.Errorf("snapshot: saving %s: %w: %w", s.SnapshotID, atomicfile.ErrUnsynced, err)
	}
	return nil
}

// Load implements Store. A file that exists but cannot be decoded is an
// error naming it, not store.ErrNotFound.
func (j *JSONStore) Load(ctx context.Context, id string) (*durable.Snapshot, error) {
	path, err := j.path(id)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", id, store.ErrNotFound)
	}
	s, err := readSnapshot(path, id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: loading %s: %w", id, err)
	}
	return s, nil
}

// readSnapshot reads the file of snapshot id. A file naming another
// snapshot (a hand edit, a copy under another name) is refused: read as it
// is, List would show that id once more, for a file no Load or Delete of
// it reaches.
func readSnapshot(path, id string) (*durable.Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := pyjson.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	s, err := durable.SnapshotFromJSON(m)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	if s.SnapshotID != id {
		return nil, fmt.Errorf("decoding %s: it names snapshot %q", path, s.SnapshotID)
	}
	if s.Tags == nil {
		s.Tags = []string{}
	}
	return s, nil
}

// Delete implements Store.
func (j *JSONStore) Delete(ctx context.Context, id string) (bool, error) {
	path, err := j.path(id)
	if err != nil {
		return false, nil
	}
	err = os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("snapshot: deleting %s: %w", id, err)
	}
	if err := j.syncDir(j.dir); err != nil {
		return true, fmt.Errorf("snapshot: deleting %s: %w: %w", id, atomicfile.ErrUnsynced, err)
	}
	return true, nil
}

// List implements Store by reading every snapshot file; unreadable files
// are skipped, and so are the files of ids path refuses (another writer's
// snapshot_..json or snapshot_a\b.json): Load and Delete answer "not
// found" for those ids, so a listing must not show them.
func (j *JSONStore) List(ctx context.Context, p ListParams) ([]*durable.Snapshot, error) {
	paths, err := atomicfile.Glob(j.dir, "snapshot_*.json")
	if err != nil {
		return nil, fmt.Errorf("snapshot: listing: %w", err)
	}
	var out []*durable.Snapshot
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "snapshot_"), ".json")
		if _, err := j.path(id); err != nil {
			continue
		}
		s, err := readSnapshot(path, id)
		if err != nil {
			continue
		}
		if p.Matches(s) {
			out = append(out, s)
		}
	}
	return sortAndLimit(out, p.Limit), nil
}
