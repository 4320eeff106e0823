//go:build !unix

package benchwork

// PeakRSSMB returns 0: getrusage is not available on this platform.
func PeakRSSMB() float64 { return 0 }

// minorFaults returns 0: getrusage is not available on this platform.
func minorFaults() int64 { return 0 }
