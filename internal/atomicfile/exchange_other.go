//go:build !linux

package atomicfile

// exchange is not available outside Linux: Recycler falls back to Write.
func exchange(a, b string) error { return errExchangeUnsupported }
