//go:build unix

package benchwork

import (
	"syscall"
	"testing"
)

// TestMinorFaults checks that touching fresh anonymous memory shows in
// the fault counter the workloads report.
func TestMinorFaults(t *testing.T) {
	const pages = 256
	b, err := syscall.Mmap(-1, 0, pages*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	before := minorFaults()
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if got := minorFaults() - before; got < pages/2 {
		t.Errorf("%d minor faults after touching %d fresh pages", got, pages)
	}
}
