package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// isTerminal reports whether r is a terminal a person types into, so
// bundle run may prompt on it. A character device is not enough:
// /dev/null is one too, and under cron, systemd or `</dev/null` a prompt
// would read EOF at once instead of saying that no answer is left.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}
