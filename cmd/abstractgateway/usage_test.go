package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Without the fix, `abstractgateway bundle help` says run uses "an in-memory
// store"; it runs on the embedded SQLite store (in a temporary directory
// unless --data-dir), as `bundle run -h` and the README say.
func TestCLI_BundleHelpDescribesTheStoreRunUses(t *testing.T) {
	t.Parallel()
	code, out, _ := call(t, "help")
	if code != 0 {
		t.Fatalf("bundle help: exit %d", code)
	}
	if strings.Contains(out, "in-memory store") {
		t.Errorf("bundle help says run uses an in-memory store; it uses the embedded SQLite store (--data-dir keeps it):\n%s", out)
	}
}

// Without the fix, asking for help with -h exits 2 (the usage-error code) for
// example and every bundle subcommand, while `help`, `bundle help` and
// `bench -h` exit 0 (and Go's own flag.ExitOnError exits 0 on -h).
// `example -h` also prints only "Usage of example:" and its flags.
func TestCLI_DashHExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench", "-h"},
		{"example", "-h"},
		{"bundle", "run", "-h"},
		{"bundle", "pack", "-h"},
		{"bundle", "inspect", "-h"},
		{"bundle", "validate", "-h"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Errorf("abstractgateway %s: exit %d, want 0 (as for `help` and `bench -h`)", strings.Join(args, " "), code)
		}
	}
}

// Every other command refuses a flag it does not define (exit 2, "flag
// provided but not defined"), and the README says every command prints
// its help with -h; "version" ignored whatever followed it: `version -h`
// printed the version, `version --bogus` and `version stray` exited 0, so
// a typo in a script (`abstractgateway version --json`) passed unnoticed.
func TestCLIVersionRefusesUnknownArguments(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--bogus", "stray"} {
		var out, errb strings.Builder
		code := run(context.Background(), []string{"version", arg}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), strings.TrimLeft(arg, "-")) {
			t.Errorf("version %s: exit %d, stderr %q (want a usage error naming %q)", arg, code, errb.String(), arg)
		}
	}
}

// TestNoCommandIsAUsageError: abstractgateway without a command prints
// the usage on stderr and exits 2.
func TestNoCommandIsAUsageError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), nil, &stdout, &stderr); code != 2 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), "usage: abstractgateway <command>") {
		t.Fatalf("no command: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
