package code

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Each item s.codepoints() yields is a new string besides its slot in
// the list (two values): list.extend of 200,000 code points under a
// 4 MiB limit (262,144 values) is refused before Starlark builds them.
func TestExtendByCodepointsCountsTwoValuesAnItem(t *testing.T) {
	src := "def f(_input):\n    s = \"a\" * 200000\n    x = []\n    x.extend(s.codepoints())\n    return len(x)\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 4 << 20, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "list.extend() of more than 131072 items") {
		t.Fatalf("err = %v, want the list.extend() refusal", err)
	}
}
