//go:build !unix

package sqlite

import (
	"errors"
	"os"
)

// checkWritable reports whether the file at path is marked read-only
// (the only check offered here without opening it).
func checkWritable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.IsDir() && st.Mode().Perm()&0o222 == 0 {
		return errors.New("the file is read-only")
	}
	return nil
}
