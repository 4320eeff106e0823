//go:build unix

package sqlite

import "golang.org/x/sys/unix"

// checkWritable reports whether this process may write the file or
// directory at path, as the kernel decides it (modes, a read-only mount,
// an immutable file, which binds root too), without opening it: closing a
// descriptor of the database file would drop the POSIX locks other
// connections of this process hold on it.
func checkWritable(path string) error { return unix.Access(path, unix.W_OK) }
