//go:build !linux

package atomicfile

import "os"

// exchange is not available outside Linux: Recycler falls back to Write.
func exchange(a, b string) error { return errExchangeUnsupported }

// renameNoReplace is not available outside Linux: WriteNew checks first.
func renameNoReplace(a, b string) error { return errExchangeUnsupported }

// linkedElsewhere is never asked outside Linux, where nothing is recycled.
func linkedElsewhere(f *os.File) (bool, error) { return false, nil }

// openElsewhere is never asked outside Linux, where nothing is recycled.
func openElsewhere(f *os.File) (open, known bool) { return false, false }
