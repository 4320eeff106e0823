//go:build !unix

package jsonfile

import "os"

// lockDir does nothing where flock is missing: there, keeping to one
// store per directory is up to the operator.
func lockDir(dir string) (*os.File, error) { return nil, nil }
