package code

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// codeInChild runs src's f in a child process: the current test run again
// with env set to 1. Code whose failure is fatal to a Go process (a stack
// overflow, an allocation past the address space) is tried there, with
// the limits prepare sets. In the child it prints the result and returns
// child true (the test must then return); in the parent it returns what
// the child got, and fails the test if the child died.
func codeInChild(t *testing.T, env string, prepare func() error, src string, lim Limits) (got any, errText string, child bool) {
	t.Helper()
	if os.Getenv(env) == "1" {
		res := map[string]any{}
		if err := prepare(); err != nil {
			res["err"] = "preparing the child: " + err.Error()
		} else {
			v, _, err := Run(context.Background(), src, "f", map[string]any{}, lim)
			res["got"], res["err"] = v, errString(err)
		}
		b, _ := json.Marshal(res)
		os.Stdout.WriteString("\nCHILDRESULT " + string(b) + "\n")
		return nil, "", true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		first := text
		if i := strings.Index(first, "\n\n"); i > 0 {
			first = first[:i]
		}
		t.Fatalf("the code killed the process (%v):\n%s", err, first)
	}
	i := strings.Index(text, "CHILDRESULT ")
	if i < 0 {
		t.Fatalf("child printed no result:\n%s", text)
	}
	line, _, _ := strings.Cut(text[i+len("CHILDRESULT "):], "\n")
	var res struct {
		Got any    `json:"got"`
		Err string `json:"err"`
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("bad child output %q: %v", line, err)
	}
	return res.Got, res.Err, false
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// codeInTimedChild runs src's f in a child process (the current test run
// again with env set to 1) whose address space is capped at asCap bytes
// (0: no cap), and waits at most wait for it: code that would outlive its
// timeout in a Go loop, or kill the process, is tried there. In the child
// it returns child true (the test must then return); in the parent the
// child's error text, or died (the process aborted, with its output) or
// hung (still running after wait: killed).
func codeInTimedChild(t *testing.T, env string, asCap uint64, src string, lim Limits, wait time.Duration) (errText string, died, hung bool, out string, child bool) {
	t.Helper()
	if os.Getenv(env) == "1" {
		res := map[string]any{}
		if asCap > 0 {
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: asCap, Max: asCap}); err != nil {
				res["err"] = "preparing the child: " + err.Error()
			}
		}
		if res["err"] == nil {
			_, _, err := Run(context.Background(), src, "f", map[string]any{}, lim)
			res["err"] = errString(err)
		}
		b, _ := json.Marshal(res)
		os.Stdout.WriteString("\nTIMEDRESULT " + string(b) + "\n")
		return "", false, false, "", true
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1")
	b, err := cmd.CombinedOutput()
	text := string(b)
	if ctx.Err() != nil {
		return "", false, true, text, false
	}
	i := strings.Index(text, "TIMEDRESULT ")
	if err != nil || i < 0 {
		if len(text) > 3000 {
			text = text[:3000]
		}
		return "", true, false, text, false
	}
	line, _, _ := strings.Cut(text[i+len("TIMEDRESULT "):], "\n")
	var res struct{ Err string }
	_ = json.Unmarshal([]byte(line), &res)
	return res.Err, false, false, text, false
}

// wantLimitErrorInChild runs src in a child process (codeInTimedChild)
// and, in the parent, fails t unless the code stopped with the sandbox's
// limit error (wantChildLimitError). It must end the test or subtest.
func wantLimitErrorInChild(t *testing.T, env string, asCap uint64, src string, lim Limits, wait time.Duration, what string) {
	t.Helper()
	errText, died, hung, out, child := codeInTimedChild(t, env, asCap, src, lim, wait)
	if child {
		return
	}
	wantChildLimitError(t, what, errText, died, hung, out)
}

// wantChildLimitError fails t when the child of codeInTimedChild hung or
// died, or did not stop with the sandbox's limit error.
func wantChildLimitError(t *testing.T, what, errText string, died, hung bool, out string) {
	t.Helper()
	switch {
	case hung:
		t.Fatalf("%s: the code was still running past its timeout (a Go loop the watchdog cannot interrupt); the child was killed", what)
	case died:
		t.Fatalf("%s: the code killed the process:\n%s", what, out)
	case !strings.Contains(errText, ErrLimit.Error()):
		t.Fatalf("%s: err = %q, want the sandbox limit error", what, errText)
	}
}
