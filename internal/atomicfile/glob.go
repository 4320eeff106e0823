package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Glob returns the paths of the entries of dir whose names match pattern
// (filepath.Match syntax), in name order. Unlike filepath.Glob on
// filepath.Join(dir, pattern), it reads dir's own path literally: a data
// directory named "data[1]" or "x[y" would otherwise be a pattern and list
// nothing, or fail. A missing dir lists nothing, as with filepath.Glob.
func Glob(dir, pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if ok, _ := filepath.Match(pattern, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}
