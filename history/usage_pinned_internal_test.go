package history

import (
	"reflect"
	"testing"
)

// A negative token count reads as 0 (Python _parse_usage_summary:
// max(0, int(in_i))), while the default total is still input+output
// computed before that clamp.
func TestParseUsageClampsNegativeCounts(t *testing.T) {
	got := parseUsage(map[string]any{"input_tokens": -5, "output_tokens": 10})
	if want := (&usage{0, 10, 5}); !reflect.DeepEqual(got, want) {
		t.Fatalf("parseUsage = %+v, want %+v", got, want)
	}
}
