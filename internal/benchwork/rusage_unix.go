//go:build unix

package benchwork

import (
	"bytes"
	"os"
	goruntime "runtime"
	"strconv"
	"syscall"
)

// PeakRSSMB returns the process's peak resident set size in MiB, or 0
// when unknown: on Linux VmHWM (/proc/self/status), which starts over at
// exec, elsewhere getrusage ru_maxrss. Linux keeps ru_maxrss across exec,
// so a sample run in a child of the bench command would report its
// parent's peak when that is higher.
func PeakRSSMB() float64 {
	if mb, ok := hwmMB(); ok {
		return mb
	}
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

// hwmMB reads VmHWM, the peak resident set of this program since exec,
// from /proc/self/status; ok is false where there is none.
func hwmMB() (float64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if rest, found := bytes.CutPrefix(line, []byte("VmHWM:")); found {
			kb, err := strconv.ParseFloat(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 64)
			if err != nil {
				return 0, false
			}
			return kb / 1024, true
		}
	}
	return 0, false
}
