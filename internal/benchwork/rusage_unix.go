//go:build unix

package benchwork

import (
	goruntime "runtime"
	"syscall"
)

// PeakRSSMB returns the process's peak resident set size (getrusage
// ru_maxrss) in MiB, or 0 when unknown.
func PeakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	kb := float64(ru.Maxrss) // kilobytes on Linux
	if goruntime.GOOS == "darwin" || goruntime.GOOS == "ios" {
		kb /= 1024 // bytes there
	}
	return kb / 1024
}

// minorFaults returns the process's minor page faults so far (getrusage
// ru_minflt): pages the kernel had to map in on first touch, which cost
// far more than the touch itself on some VMs (see CeilingPageTouch).
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}
