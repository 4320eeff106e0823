//go:build !linux

package benchwork

import "os"

// fdatasync falls back to fsync where fdatasync(2) is not available.
func fdatasync(f *os.File) error { return f.Sync() }
