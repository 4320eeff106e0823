package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// parseFlags parses args into fs, whose output is the command's stderr.
// Asked for help (-h, -help, --help), it prints fs's usage on stdout and
// returns 0, as the help subcommands do: help that was asked for is the
// command's output, not a usage error. On a bad flag it returns 2 after
// the flag package's message and the usage, on stderr. ok is true when
// the command should go on.
//
// A failed write of the help fails the command: when stdout is the
// command's outWriter, that reports it as the command exits (reporting it
// here too would print the message twice); else parseFlags does.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	usage := fs.Usage
	if usage == nil {
		usage = func() {
			fmt.Fprintf(fs.Output(), "usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
	}
	fs.Usage = func() {} // printed below, on the stream that fits
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		stderr := fs.Output()
		out, owned := stdout.(*outWriter)
		if !owned {
			out = &outWriter{w: stdout}
		}
		fs.SetOutput(out)
		fs.Usage()
		fs.SetOutput(stderr)
		if owned {
			return 0, false
		}
		return out.exit(fs.Name(), stderr, 0), false
	}
	fs.Usage()
	return 2, false
}

// outWriter is a command's stdout. It remembers the first failed write, so
// a command can print as it goes and check once, before it exits, that
// its output reached its destination: a full disk or a closed pipe must
// not end in exit 0 with a truncated file.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = err
	}
	return n, err
}

// exit returns code, or 1 with a message naming the command when a write
// to the output failed.
func (o *outWriter) exit(cmd string, stderr io.Writer, code int) int {
	if o.err == nil {
		return code
	}
	fmt.Fprintf(stderr, "%s: writing the output: %v\n", cmd, o.err)
	return 1
}

// shellQuote quotes s for a POSIX shell unless every character of it is
// taken literally there, so a printed command can be pasted as is.
func shellQuote(s string) string {
	literal := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !literal(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellCommand joins args into a command line for a POSIX shell.
func shellCommand(args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// wrongArgs reports that a command got other positional arguments than
// want (say "one bundle file"; "" for none), prints its usage and returns
// 2.
func wrongArgs(fs *flag.FlagSet, want string) int {
	switch {
	case want == "":
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
	case fs.NArg() == 0:
		fmt.Fprintf(fs.Output(), "%s: missing %s\n", fs.Name(), want)
	default:
		fmt.Fprintf(fs.Output(), "%s: want %s, got %q (flags go before it)\n", fs.Name(), want, fs.Args())
	}
	fs.Usage()
	return 2
}
