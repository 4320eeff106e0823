package seccomptest

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// BPF opcodes and seccomp constants of linux/amd64.
const (
	ldAbsW     = 0x20 // BPF_LD | BPF_W | BPF_ABS
	andK       = 0x54 // BPF_ALU | BPF_AND | BPF_K
	jeqK       = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	retK       = 0x06 // BPF_RET | BPF_K
	archX86_64 = 0xC000003E
	retAllow   = 0x7fff0000
	retErrno   = 0x00050000
	sysSeccomp = 317
	setFilter  = 1 // SECCOMP_SET_MODE_FILTER
	flagTSync  = 1 // SECCOMP_FILTER_FLAG_TSYNC
	noNewPrivs = 38
	offsetNr   = 0
	offsetArch = 4
	offsetArg2 = 32 // args[2], low word (little-endian)
)

// FailSyscalls makes every call of the system calls numbered nrs fail
// with errno, in every thread of the process, for the rest of its life.
func FailSyscalls(t *testing.T, errno syscall.Errno, nrs ...uint32) {
	t.Helper()
	n := uint8(len(nrs))
	filter := []syscall.SockFilter{
		{Code: ldAbsW, K: offsetArch},
		{Code: jeqK, Jt: 0, Jf: n + 1, K: archX86_64},
		{Code: ldAbsW, K: offsetNr},
	}
	for i, nr := range nrs {
		filter = append(filter, syscall.SockFilter{Code: jeqK, Jt: n - uint8(i), Jf: 0, K: nr})
	}
	install(t, append(filter,
		syscall.SockFilter{Code: retK, K: retAllow},
		syscall.SockFilter{Code: retK, K: retErrno | uint32(errno)}))
}

// FailReadOnlyOpens makes every openat with O_RDONLY access fail with
// errno, in every thread of the process, for the rest of its life.
// Opening a directory (for its fsync) is such an open; creating or
// writing a file is not.
func FailReadOnlyOpens(t *testing.T, errno syscall.Errno) {
	t.Helper()
	install(t, []syscall.SockFilter{
		{Code: ldAbsW, K: offsetArch},
		{Code: jeqK, Jt: 0, Jf: 5, K: archX86_64},
		{Code: ldAbsW, K: offsetNr},
		{Code: jeqK, Jt: 0, Jf: 3, K: syscall.SYS_OPENAT},
		{Code: ldAbsW, K: offsetArg2},
		{Code: andK, K: syscall.O_ACCMODE},
		{Code: jeqK, Jt: 1, Jf: 0, K: syscall.O_RDONLY},
		{Code: retK, K: retAllow},
		{Code: retK, K: retErrno | uint32(errno)},
	})
}

// install sets filter for every thread (TSYNC), or skips t where the
// kernel refuses it.
func install(t *testing.T, filter []syscall.SockFilter) {
	t.Helper()
	prog := syscall.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, noNewPrivs, 1, 0); e != 0 {
		t.Skipf("prctl(PR_SET_NO_NEW_PRIVS): %v", e)
	}
	if _, _, e := syscall.RawSyscall(sysSeccomp, setFilter, flagTSync, uintptr(unsafe.Pointer(&prog))); e != 0 {
		t.Skipf("seccomp filter unavailable: %v", e)
	}
}
