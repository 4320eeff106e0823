//go:build linux

package benchwork

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (not its metadata unless needed) to the disk.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
