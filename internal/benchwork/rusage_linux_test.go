package benchwork

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"
)

// hiwaterMB returns VmHWM, the peak RSS of this process's own address
// space (ru_maxrss also carries the peak of the process that exec'd it).
func hiwaterMB(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.Atoi(string(bytes.Fields(v)[0]))
			if err != nil {
				t.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// TestPageTouchCeilingKeepsPeakRSS: the ceiling must not raise the
// process's peak RSS, which the bench's child processes inherit through
// exec (ru_maxrss) and would report as their own.
func TestPageTouchCeilingKeepsPeakRSS(t *testing.T) {
	before := hiwaterMB(t)
	if _, err := MeasureCeiling(t.Context(), CeilingPageTouch, t.TempDir(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if grew := hiwaterMB(t) - before; grew > 4 {
		t.Errorf("peak RSS grew by %.1f MB during the page_first_touch ceiling", grew)
	}
}
