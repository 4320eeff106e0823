//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos || windows)

package main

// isTerminalFd is false where no terminal can be detected: the command
// then takes answers from --answer only, as it does from a pipe.
func isTerminalFd(fd uintptr) bool { return false }
