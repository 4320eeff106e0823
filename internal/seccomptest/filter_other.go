//go:build !(linux && amd64)

package seccomptest

import (
	"syscall"
	"testing"
)

// FailSyscalls skips t: seccomp filters are built for linux/amd64 only.
func FailSyscalls(t *testing.T, _ syscall.Errno, _ ...uint32) {
	t.Skip("seccomp filters are built for linux/amd64 only")
}

// FailReadOnlyOpens skips t: seccomp filters are built for linux/amd64 only.
func FailReadOnlyOpens(t *testing.T, _ syscall.Errno) {
	t.Skip("seccomp filters are built for linux/amd64 only")
}
