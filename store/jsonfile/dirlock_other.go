//go:build !unix

package jsonfile

import "os"

// lockDir does nothing where flock is missing: there, keeping to one
// store per directory, and off a directory a Python gateway runner works
// on (whose own lock "always succeeds" there: spec gateway-api §8.2), is
// up to the operator.
func lockDir(dir string) (locks []*os.File, readOnly bool, err error) { return nil, false, nil }

// unlockFile does nothing: lockDir takes no lock here.
func unlockFile(*os.File) {}
