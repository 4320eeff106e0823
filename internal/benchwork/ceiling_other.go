//go:build !unix

package benchwork

import (
	"errors"
	"time"
)

// pageTouchCeiling needs mmap, which this platform lacks.
func pageTouchCeiling(time.Duration) (int, time.Duration, error) {
	return 0, 0, errors.ErrUnsupported
}
