// Command zarrfs mounts a Zarr hierarchy read-only as a file system in which
// every array is an ordinary file of decoded bytes, and inspects hierarchies
// from the command line (README.md describes the commands).
//
//	zarrfs mount [flags] STORE MOUNTPOINT
//	zarrfs unmount MOUNTPOINT
//	zarrfs ls STORE [PATH]
//	zarrfs tree STORE
//	zarrfs info STORE PATH [--json]
//	zarrfs cat STORE PATH
//	zarrfs example DIR
//	zarrfs demo [MOUNTPOINT]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// env is what a subcommand may touch of the process: its output streams
// and the termination signals it receives (tests substitute all three).
type env struct {
	stdout, stderr io.Writer
	signals        <-chan os.Signal
}

// command is a subcommand.
type command struct {
	name    string
	args    string // usage after the name
	short   string // one line for the overview
	summary string // the description in the command's own help
	// flags registers the subcommand's flags; run gets the positional
	// arguments after they are parsed.
	flags func(fl *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error
	nargs [2]int // minimum and maximum number of positional arguments
}

var commands = []command{
	mountCommand,
	unmountCommand,
	lsCommand,
	treeCommand,
	infoCommand,
	catCommand,
	exampleCommand,
	demoCommand,
}

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(context.Background(), &env{stdout: os.Stdout, stderr: os.Stderr, signals: sigs}, os.Args[1:]))
}

// run runs the command line args and returns the exit status: 0, or 1 after
// printing one line naming what failed to standard error (2 for usage
// errors, as pflag does).
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "zarrfs: unknown command %q (see zarrfs -h)\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "zarrfs mounts Zarr hierarchies read-only: every array becomes a file of decoded bytes.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	for _, c := range commands {
		fmt.Fprintf(w, "  zarrfs %-32s %s\n", c.name+" "+c.args, c.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "STORE is a directory, a .zip file, an http(s):// URL or s3://bucket/prefix; PATH a node such as sub/temp.")
	fmt.Fprintln(w, "Run zarrfs COMMAND -h for a command's flags.")
}

// run parses the subcommand's flags and arguments and runs it.
func (c command) run(ctx context.Context, e *env, args []string) int {
	fl := pflag.NewFlagSet("zarrfs "+c.name, pflag.ContinueOnError)
	fl.SetOutput(e.stderr)
	fl.SortFlags = false
	fl.SetInterspersed(true)
	fn := c.flags(fl)
	fl.Usage = func() {
		fmt.Fprintf(e.stdout, "Usage: zarrfs %s %s\n\n%s\n", c.name, c.args, c.summary)
		if fl.HasFlags() {
			fmt.Fprintf(e.stdout, "\nFlags:\n%s", fl.FlagUsages())
		}
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(e.stderr, "zarrfs %s: %v (see zarrfs %s -h)\n", c.name, err, c.name)
		return 2
	}
	if n := fl.NArg(); n < c.nargs[0] || n > c.nargs[1] {
		fmt.Fprintf(e.stderr, "zarrfs %s: want arguments %s, got %d (see zarrfs %s -h)\n", c.name, c.args, n, c.name)
		return 2
	}
	if err := fn(ctx, e, fl.Args()); err != nil {
		fmt.Fprintf(e.stderr, "zarrfs %s: %s\n", c.name, oneLine(err.Error()))
		return 1
	}
	return 0
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}
