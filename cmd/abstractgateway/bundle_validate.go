package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// bundleValidate reads and compiles every given bundle (a directory means
// every *.flow inside it). One bad bundle never stops the others; the
// exit code is 1 when any failed.
func bundleValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: abstractgateway bundle validate (path.flow | dir)...") }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	var paths []string
	for _, arg := range fs.Args() {
		info, err := os.Stat(arg)
		if err == nil && info.IsDir() && !isBundleDir(arg) {
			entries, err := os.ReadDir(arg)
			if err != nil {
				fmt.Fprintf(stderr, "bundle validate: %v\n", err)
				return 1
			}
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".flow") {
					paths = append(paths, filepath.Join(arg, e.Name()))
				}
			}
			continue
		}
		paths = append(paths, arg)
	}
	sort.Strings(paths)
	failed := 0
	for _, p := range paths {
		if err := validateOne(p); err != nil {
			failed++
			for _, e := range leafErrors(err) {
				fmt.Fprintf(stdout, "FAIL %s: %v\n", filepath.Base(p), e)
			}
			continue
		}
		fmt.Fprintf(stdout, "ok   %s\n", filepath.Base(p))
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d bundle(s) failed\n", failed, len(paths))
		return 1
	}
	return 0
}

// isBundleDir reports whether dir is an unpacked bundle (has a manifest).
func isBundleDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil
}

func validateOne(path string) error {
	b, err := bundle.Read(path)
	if err != nil {
		return err
	}
	_, err = visualflow.CompileBundle(b, visualflow.BundleOptions{})
	return err
}

// leafErrors flattens joined errors, one line per problem.
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}
