package sqlite

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (not its timestamps) to disk.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
