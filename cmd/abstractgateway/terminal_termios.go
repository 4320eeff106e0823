//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package main

import "golang.org/x/sys/unix"

// isTerminalFd reports whether fd is a terminal: only a terminal answers
// the get-attributes ioctl (what isatty(3) asks).
func isTerminalFd(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}
