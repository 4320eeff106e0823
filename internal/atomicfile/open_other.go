//go:build !unix

package atomicfile

import "os"

// OpenFile is os.OpenFile (the fast path is for unix).
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
