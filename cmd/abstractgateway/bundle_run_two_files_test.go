package main

import (
	"strings"
	"testing"
)

// `abstractgateway bundle run a.flow b.flow` (two bundles, no flags at
// all) is refused, as it should be, and the message names both files. It
// reported only the second and blamed flag order:
//
//	bundle run: want one bundle file, got ["b.flow"] (flags go before it)
//
// There is no flag on that command line, and a.flow, which the parser took
// as the bundle, was not mentioned (parseRunFlags strips the first argument
// off before wrongArgs reports fs.Args()).
func TestBundleRunTwoFilesMessage(t *testing.T) {
	t.Parallel()
	code, _, errOut := cliRun(t, strings.NewReader(""), "a.flow", "b.flow")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, errOut)
	}
	first := strings.SplitN(errOut, "\n", 2)[0]
	if strings.Contains(first, "flags go before it") || !strings.Contains(first, "a.flow") {
		t.Errorf("two bundle files and no flags; the error blames flag order and drops a.flow:\n%s", first)
	}
}
