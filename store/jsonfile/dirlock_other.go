//go:build !unix

package jsonfile

import "os"

// lockDir does nothing where flock is missing: there, keeping to one
// store per directory is up to the operator.
func lockDir(dir string) (f *os.File, readOnly bool, err error) { return nil, false, nil }
