//go:build windows

package main

import "golang.org/x/sys/windows"

// isTerminalFd reports whether fd is a console: only a console has a
// console mode (NUL and pipes do not).
func isTerminalFd(fd uintptr) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}
