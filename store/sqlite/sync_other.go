//go:build !linux

package sqlite

import "os"

// fdatasync flushes f to disk (fsync where fdatasync is not offered).
func fdatasync(f *os.File) error { return f.Sync() }
