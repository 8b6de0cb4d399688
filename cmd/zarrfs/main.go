// Command zarrfs mounts a Zarr hierarchy read-only as a file system in which
// every array is an ordinary file of decoded bytes, and inspects hierarchies
// from the command line (README.md describes the commands).
//
//	zarrfs STORE MOUNTPOINT [-o OPT[,OPT…]] [-f]   the mount(8) form: mounts, then serves as a daemon
//	zarrfs mount [flags] STORE MOUNTPOINT
//	zarrfs unmount MOUNTPOINT
//	zarrfs ls STORE [PATH]
//	zarrfs tree STORE
//	zarrfs info STORE PATH [--json]
//	zarrfs cat STORE PATH
//	zarrfs preview STORE PATH
//	zarrfs export --format nc|hdr|nhdr|npy STORE PATH
//	zarrfs example DIR
//	zarrfs demo [MOUNTPOINT]
//	zarrfs cache stats|clear --cache-dir DIR
//	zarrfs serve webdav|nfs [flags] STORE
//	zarrfs version | --version
//	zarrfs completion bash|zsh|fish
//
// The command line is built with spf13/cobra from the commands below, so
// that -h, the completion scripts and the man pages (zarrfs man DIR, run by
// make install) all come from the same flag definitions.
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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// env is what a subcommand may touch of the process: its output streams
// and the termination signals it receives (tests substitute all three).
type env struct {
	stdout, stderr io.Writer
	signals        <-chan os.Signal
	args           []string // the command line, which a daemon runs again in its child
	// root is the command tree (newRoot), for the commands that print
	// help, completion scripts or man pages of it.
	root *cobra.Command
}

// command is a command of zarrfs: the root (the mount(8) form,
// mountFormCommand) and every subcommand are declared the same way. To add
// one, write a command value beside the code it runs (see lsCommand in
// inspect.go) and add it to commands below: its help, completion and man
// page follow from its fields and flags.
type command struct {
	name    string
	args    string // usage after the name
	short   string // one line for the overview
	summary string // the description in the command's own help
	// flags registers the subcommand's flags; run gets the positional
	// arguments after they are parsed. A command with sub has none.
	flags func(fl *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error
	nargs [2]int // minimum and maximum number of positional arguments

	// Optional.
	sub       []command // subcommands (serve's protocols); the command itself runs none
	validArgs []string  // the only words the positional arguments may be; completion offers them
	hidden    bool      // left out of -h (man, which make install runs)
	// checkArgs checks the positional arguments instead of nargs, and
	// complete says what completion offers after the given ones (files
	// unless it says otherwise): the mount(8) form's.
	checkArgs func(args []string) error
	complete  func(args []string) cobra.ShellCompDirective
}

// commands are the subcommands, in the order -h lists them. Add new ones
// here.
var commands = []command{
	mountCommand,
	unmountCommand,
	lsCommand,
	treeCommand,
	infoCommand,
	catCommand,
	previewCommand,
	exportCommand,
	exampleCommand,
	cacheCommand,
	demoCommand,
	versionCommand,
	serveCommand,
	completionCommand,
	manCommand,
}

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(context.Background(), &env{stdout: os.Stdout, stderr: os.Stderr, signals: sigs}, os.Args[1:]))
}

// runError is an error of a command that ran (exit status 1), as opposed
// to a usage error (status 2).
type runError struct{ err error }

func (r runError) Error() string { return r.err.Error() }
func (r runError) Unwrap() error { return r.err }

// errNoArgs is the usage error of a bare `zarrfs`, whose usage is printed.
var errNoArgs = errors.New("no arguments")

// run runs the command line args and returns the exit status: 0, or 1 after
// printing one line naming what failed to standard error (2 for usage
// errors, as pflag does).
func run(ctx context.Context, e *env, args []string) int {
	e.args = args
	root := newRoot(e)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	name := cmd.CommandPath()
	var re runError
	switch {
	case errors.Is(err, errNoArgs):
		return 2
	case errors.Is(err, errReported):
		return 1
	case errors.As(err, &re):
		hint := ""
		if cmd == root {
			if s := suggestion(root, args); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", root.Name()+" "+s)
			}
		}
		fmt.Fprintf(e.stderr, "%s: %s%s\n", name, oneLine(re.err.Error()), hint)
		return 1
	}
	if cmd == root {
		if msg := unknownCommand(root, args); msg != "" {
			fmt.Fprintf(e.stderr, "%s: %s (see %s -h)\n", name, msg, name)
			return 2
		}
	}
	fmt.Fprintf(e.stderr, "%s: %s (see %s -h)\n", name, oneLine(err.Error()), name)
	return 2
}

// unknownCommand returns what to say of a command line the root refused
// whose first word reads as a mistyped subcommand ("zarrfs mnt a b")
// rather than the STORE of the mount(8) form: a word close to a
// subcommand's name, or one that is not an existing file and, with other
// than two arguments, cannot be a STORE. "" otherwise.
func unknownCommand(root *cobra.Command, args []string) string {
	words := notStores(args)
	if len(words) == 0 {
		return ""
	}
	if s := suggestion(root, args); s != "" {
		return fmt.Sprintf("unknown command %q: did you mean %q?", words[0], s)
	}
	if len(words) != 2 {
		return fmt.Sprintf("unknown command %q", words[0])
	}
	return ""
}

// notStores returns the positional words of args when the first cannot be
// a STORE (it names no file and has no "/", "." or ":"), else nil.
func notStores(args []string) []string {
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	if len(words) == 0 || strings.ContainsAny(words[0], "/.:") {
		return nil
	}
	if _, err := os.Stat(words[0]); err == nil {
		return nil
	}
	return words
}

// suggestion returns the subcommand the first word of args is a likely
// typing mistake for (cobra's edit distance of at most 2), or "".
func suggestion(root *cobra.Command, args []string) string {
	words := notStores(args)
	if len(words) == 0 {
		return ""
	}
	if root.SuggestionsMinimumDistance <= 0 {
		root.SuggestionsMinimumDistance = 2
	}
	if s := root.SuggestionsFor(words[0]); len(s) > 0 {
		return s[0]
	}
	return ""
}

// newRoot returns the command tree: the root command, which is also the
// mount(8) form (mountform.go), with every subcommand under it.
func newRoot(e *env) *cobra.Command {
	cobra.EnableCommandSorting = false // -h lists commands in their order
	root := mountFormCommand.cobra(e)
	e.root = root
	// zarrfs(1) and -h say what a mount holds, as zarrfs-mount(1) does.
	root.Long = strings.TrimRight(root.Long, "\n") + "\n\n" + mountLayout
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.DisableAutoGenTag = true
	root.CompletionOptions.DisableDefaultCmd = true // completionCommand instead, without powershell
	root.Version = versionString()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	for _, c := range commands {
		root.AddCommand(c.cobra(e))
	}
	return root
}

// cobra returns the cobra command that runs c, with its subcommands.
func (c command) cobra(e *env) *cobra.Command {
	cc := &cobra.Command{
		Use:       strings.TrimSpace(c.name + " " + c.args),
		Short:     c.short,
		Long:      c.summary,
		Args:      nargs(c.nargs[0], c.nargs[1], c.args),
		ValidArgs: c.validArgs,
		Hidden:    c.hidden,
	}
	switch {
	case c.sub != nil:
		cc.Args = cobra.NoArgs // cobra: unknown command "x" for "zarrfs serve"
	case c.checkArgs != nil:
		cc.Args = func(_ *cobra.Command, args []string) error { return c.checkArgs(args) }
	case c.validArgs != nil:
		cc.Args = cobra.MatchAll(cc.Args, cobra.OnlyValidArgs)
	}
	if c.complete != nil {
		cc.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, c.complete(args)
		}
	}
	cc.Flags().SortFlags = false
	for _, sub := range c.sub {
		cc.AddCommand(sub.cobra(e))
	}
	if c.flags == nil {
		return cc
	}
	fn := c.flags(cc.Flags())
	cc.RunE = func(cmd *cobra.Command, args []string) error {
		if err := fn(cmd.Context(), e, args); err != nil {
			return runError{err}
		}
		return nil
	}
	return cc
}

// nargs checks the number of positional arguments.
func nargs(lo, hi int, usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if n := len(args); n < lo || n > hi {
			return fmt.Errorf("want arguments %s, got %d", usage, n)
		}
		return nil
	}
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}
