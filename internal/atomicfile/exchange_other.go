//go:build !linux

package atomicfile

// exchange is not available outside Linux: Recycler falls back to Write.
func exchange(a, b string) error { return errExchangeUnsupported }

// renameNoReplace is not available outside Linux: WriteNew checks first.
func renameNoReplace(a, b string) error { return errExchangeUnsupported }
