package code

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
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
