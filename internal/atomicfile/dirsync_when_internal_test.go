package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// recordDirSyncs makes this package's directory syncs succeed without
// syncing, and records the directories they were asked for, until the
// test ends. Tests using it are not parallel: the hook is package state.
func recordDirSyncs(t *testing.T) *[]string {
	t.Helper()
	var dirs []string
	real := syncDirectory
	t.Cleanup(func() { syncDirectory = real })
	syncDirectory = func(dir string) error { dirs = append(dirs, dir); return nil }
	return &dirs
}

// Write, Replace, Stage and Promote sync the directory only when the
// options ask for it (SyncDir, and not NoSync: "Ignored with NoSync"),
// and then the directory itself, not the file. Breaks if the SyncDir or
// the NoSync test of a writer is dropped (a sync too many on every save),
// or if the file's path is synced in place of its directory (a sync that
// succeeds but leaves the rename itself to a power loss).
func TestDirectorySyncOnlyWhenAskedAndOfTheDirectory(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		want bool
	}{
		{"default", Options{}, false},
		{"SyncDir with NoSync", Options{SyncDir: true, NoSync: true}, false},
		{"SyncDir", Options{SyncDir: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := NewRecycler(dir, c.opts, true)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			dirs := recordDirSyncs(t)
			steps := []struct {
				what string
				do   func() error
			}{
				{"Write", func() error { return Write(path, []byte("w"), c.opts) }},
				{"WriteNew", func() error { return WriteNew(filepath.Join(dir, "n.json"), []byte("n"), c.opts) }},
				{"Replace", func() error { return r.Replace(path, []byte("r")) }},
				{"Replace of a missing file", func() error { return r.Replace(filepath.Join(dir, "m.json"), []byte("m")) }},
				{"Stage and Promote", func() error {
					staged, err := r.Stage("f.staged", []byte("s"))
					if err != nil {
						return err
					}
					return r.Promote(staged, path)
				}},
				{"Promote onto a missing file", func() error {
					staged, err := r.Stage("g.staged", []byte("g"))
					if err != nil {
						return err
					}
					return r.Promote(staged, filepath.Join(dir, "g.json"))
				}},
			}
			for _, s := range steps {
				*dirs = nil
				if err := s.do(); err != nil {
					t.Fatalf("%s: %v", s.what, err)
				}
				if !c.want {
					if len(*dirs) != 0 {
						t.Errorf("%s with %+v synced %v; want no directory sync", s.what, c.opts, *dirs)
					}
					continue
				}
				if len(*dirs) == 0 || slices.ContainsFunc(*dirs, func(d string) bool { return filepath.Clean(d) != filepath.Clean(dir) }) {
					t.Errorf("%s with %+v synced %v; want the directory %s", s.what, c.opts, *dirs, dir)
				}
			}
		})
	}
}
