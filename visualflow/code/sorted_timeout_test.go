package code

import (
	"context"
	"testing"
	"time"
)

// sorted() checked the watchdog's stop only inside lists, tuples and
// dicts: sorting millions of numbers was one Go sort that never looked at
// it (6M ints: ~3 s under a 300 ms timeout; 10M here, so that the 3 s bound leaves room for a loaded machine). Each comparison now ticks,
// and a stop ends the sort at once.
func TestSortedOfScalarsHonoursTimeout(t *testing.T) {
	src := "def transform(_input):\n" +
		"    l = list(range(10000000))\n" +
		"    return len(sorted(l, reverse=True))\n"
	start := time.Now()
	_, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{Timeout: 300 * time.Millisecond})
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("sorted() of 10M ints ran %s under a 300ms timeout (err=%v)", el, err)
	}
	if err == nil {
		t.Fatal("sorted() of 10M ints under a 300ms timeout succeeded")
	}
}
