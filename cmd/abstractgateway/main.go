// Command abstractgateway runs durable workflows: bundles, benchmarks and
// (soon) the HTTP gateway.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(runMain(os.Args[1:]))
}

// runMain runs the command of args as the executable does: with
// signalContext, and stdout and stderr that interrupt the command when
// their reader has gone (brokenPipe).
func runMain(args []string) int {
	ctx, stop := signalContext()
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return run(ctx, args, &brokenPipe{w: os.Stdout, cancel: cancel}, &brokenPipe{w: os.Stderr, cancel: cancel})
}

// brokenPipe is stdout or stderr of the executable. SIGPIPE being
// ignored (signalContext), a write to a pipe whose reader has gone fails
// with EPIPE instead of killing the process; it then cancels the
// command's context, so the command stops as on Ctrl-C (cleanups done,
// exit 1) rather than going on for nobody — in `bundle run x.flow 2>&1 |
// head` the shell waits for the whole pipeline, a run sleeping through a
// wait_until included.
type brokenPipe struct {
	w      io.Writer
	cancel context.CancelFunc
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		b.cancel()
	}
	return n, err
}

// signalContext is the context of a command: SIGINT and SIGTERM end it,
// so the command stops, says how to continue its run and removes its
// temporary directory; so does SIGHUP (the terminal closed, the SSH
// session lost), unless the command was started with it ignored (nohup),
// which it keeps. SIGPIPE is ignored: a write to a stdout or stderr
// pipe nobody reads any more (`bench | head`) then fails with EPIPE, which
// the command reports (exit 1) after its cleanups, instead of the Go
// runtime killing the process at that write and leaving the temporary
// data dir behind with the store unclosed.
func signalContext() (context.Context, context.CancelFunc) {
	signal.Ignore(syscall.SIGPIPE)
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return signal.NotifyContext(context.Background(), sigs...)
}

const usage = `usage: abstractgateway <command> [flags]

commands:
  example   run a durable example workflow: it stops at a question and continues later
  bundle    pack, inspect, validate and run .flow bundles
  bench     run the benchmark workloads (W1–W4) and print JSON lines
  version   print the version

"abstractgateway <command> -h" describes a command and its flags.
`

// run dispatches a subcommand; it is what tests call.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "example":
		return runExample(ctx, args[1:], stdout, stderr)
	case "bundle":
		return runBundleIO(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		out := &outWriter{w: stdout}
		fmt.Fprint(out, usage)
		return out.exit("help", stderr, 0)
	}
	fmt.Fprintf(stderr, "abstractgateway: unknown command %q\n\n%s", args[0], usage)
	return 2
}

const version = "0.1.0-dev"

// runVersion is the "version" subcommand: it takes no flags or arguments.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), "usage: abstractgateway version\n\nPrints the version.\n") }
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return wrongArgs(fs, "")
	}
	out := &outWriter{w: stdout}
	fmt.Fprintln(out, "abstractgateway", version)
	return out.exit("version", stderr, 0)
}
