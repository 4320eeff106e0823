// Package seccomptest makes chosen system calls fail inside a test, to
// reach error paths a real disk seldom takes (a failed fsync, a directory
// that cannot be opened for its sync). The filter is a seccomp filter
// installed in every thread of the process and never removed, so a test
// installs it in a child process of the test binary: RunChild starts that
// child, ChildDir tells the child test it is the one.
//
// Filters exist on linux/amd64 only; elsewhere the Fail functions skip
// the test.
package seccomptest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RunChild runs the test named child in a new process of this test
// binary, with the environment variable env set to a fresh temporary
// directory for it to work in. It fails t with the child's output if the
// child fails, and skips t if the child skipped (no seccomp here).
func RunChild(t *testing.T, env, child string) {
	t.Helper()
	if os.Getenv(env) != "" {
		t.Skipf("the child runs %s", child)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", child, err, out)
	}
	if strings.Contains(string(out), "--- SKIP: "+child) {
		t.Skipf("child %s skipped:\n%s", child, out)
	}
}

// ChildDir returns the directory RunChild gave the child test, and skips
// t when it runs on its own, outside RunChild.
func ChildDir(t *testing.T, env string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("run by the test that calls seccomptest.RunChild with %s", env)
	}
	return dir
}
