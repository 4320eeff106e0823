package main

import (
	"strings"
	"testing"
)

// bundle validate's help: "Exit code: ... 2 usage". Without a bundle or
// directory to validate, the command has validated nothing: a CI step
// whose glob expanded to nothing must not pass. Found by mutating that
// case to exit 0, which no test caught.
func TestValidateWithoutArgumentsIsAUsageError(t *testing.T) {
	t.Parallel()
	code, out, errOut := call(t, "validate")
	if code != 2 {
		t.Fatalf("bundle validate with no argument: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "usage: abstractgateway bundle validate") {
		t.Errorf("no usage on stderr:\n%s", errOut)
	}
}
