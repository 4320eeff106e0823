package pyval

import (
	"math"
	"strings"
	"testing"
)

// Expected values are what CPython 3.11 returns.

// Guards the clamp of an end index past the string's length (s[0:10] on a
// short string), which Python allows.
func TestSliceClampsEndPastLength(t *testing.T) {
	t.Parallel()
	end := func(i int64) *int64 { return &i }
	for _, tt := range []struct {
		s          string
		start, end int64
		want       string
	}{
		{"abc", 0, 4, "abc"}, {"abc", 0, 5, "abc"}, {"héllo", -3, 10, "llo"},
		{"日本", 1, math.MaxInt64, "本"}, {"abc", 4, 9, ""},
	} {
		if got := Slice(tt.s, tt.start, end(tt.end)); got != tt.want {
			t.Errorf("Slice(%q, %d, %d) = %q, want %q", tt.s, tt.start, tt.end, got, tt.want)
		}
	}
}

// Guards SplitN's maxsplit: 0 splits nothing ("a,b".split(",", 0) ==
// ["a,b"]), only a negative maxsplit means "no limit".
func TestSplitNMaxsplitZeroSplitsNothing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		max  int
		want string
	}{
		{0, "[a,b,c]"}, {1, "[a b,c]"}, {-1, "[a b c]"}, {5, "[a b c]"},
	} {
		got := SplitN("a,b,c", ",", tt.max)
		if s := "[" + strings.Join(got, " ") + "]"; s != tt.want {
			t.Errorf("SplitN(maxsplit=%d) = %q, want %s", tt.max, got, tt.want)
		}
	}
}

// Guards Replace's count: a non-negative count limits the replacements
// ("aaa".replace("a", "b", 2) == "bba").
func TestReplaceHonoursCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		count int
		want  string
	}{{2, "bba"}, {0, "aaa"}, {-1, "bbb"}} {
		if got := Replace("aaa", "a", "b", tt.count); got != tt.want {
			t.Errorf("Replace(count=%d) = %q, want %q", tt.count, got, tt.want)
		}
	}
}
