//go:build !unix

package benchwork

import (
	"context"
	"errors"
	"time"
)

// platformCeilings: none beyond the portable ones (see Ceilings).
var platformCeilings []string

// pageTouchCeiling needs mmap, which this platform lacks.
func pageTouchCeiling(context.Context, time.Duration) (int, time.Duration, error) {
	return 0, 0, errors.ErrUnsupported
}
