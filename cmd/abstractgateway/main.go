// Command abstractgateway runs durable workflows: bundles, benchmarks and
// (soon) the HTTP gateway.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: abstractgateway <command> [flags]

commands:
  example   run the example workflow on the embedded SQLite store
  bundle    pack, inspect, validate and run .flow bundles
  bench     run the benchmark workloads (W1–W4) and print JSON lines
  version   print the version
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
		return runBundle(ctx, args[1:])
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "abstractgateway", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "abstractgateway: unknown command %q\n\n%s", args[0], usage)
	return 2
}

const version = "0.1.0-dev"
