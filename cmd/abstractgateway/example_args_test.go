package main

import (
	"strings"
	"testing"
)

// TestExampleUsageErrorsExitTwo: an unexpected argument or a bad --store
// is a usage error (exit 2) that says what is wrong, and runs nothing.
// Would break if either were ignored or exited 1 like a failed run.
func TestExampleUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", t.TempDir(), "--answer", "yes", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"--data-dir", t.TempDir(), "--answer", "yes", "--store", "xml"}, `--store "xml": want auto, sqlite or json`},
	} {
		code, out, errOut := runExampleCommand(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("example %q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestExampleEmptyLineIsAnAnswer: an empty line on stdin (Enter at the
// prompt) answers the question with "" (the order is not shipped); only
// the end of stdin leaves the run waiting. Would break if an empty line
// stopped the command like EOF.
func TestExampleEmptyLineIsAnAnswer(t *testing.T) {
	t.Parallel()
	if out := exampleWithStdin(t, "\n"); !strings.Contains(out, `completed: {"answer":"","shipped":false}`) {
		t.Fatalf("an empty line on stdin:\n%s", out)
	}
}
