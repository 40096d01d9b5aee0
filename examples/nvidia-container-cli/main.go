package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// usageError is a command line the parser refused.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one of the commands: it parses its own flags, then acts.
type command func(g *globals, args []string, stdout io.Writer) error

var commands = map[string]command{"info": infoCommand, "list": listCommand, "configure": configureCommand}

// run is the whole program; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	prog := progName()
	g := &globals{stderr: stderr, log: slog.New(slog.DiscardHandler)}
	defer g.close()
	err := dispatch(g, args, stdout)
	var ue usageError
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\nTry `%s --help' for more information.\n", prog, ue.err, prog)
	default:
		g.log.Error("failed", "err", err)
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	}
	return 1
}

func dispatch(g *globals, args []string, stdout io.Writer) error {
	fs := g.flagSet()
	var version bool
	fs.BoolVarP(&version, "version", "V", false, "Print program version")
	if err := parse(fs, globalSynopsis, attachUser(args), stdout); err != nil {
		return err
	}
	if version {
		bi, _ := debug.ReadBuildInfo()
		return nvcli.WriteVersion(stdout, bi)
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("missing command (info, list or configure)")}
	}
	cmd, ok := commands[fs.Arg(0)]
	if !ok {
		return usageError{fmt.Errorf("unknown command %q (want info, list or configure)", fs.Arg(0))}
	}
	if err := g.openLog(); err != nil {
		return &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	return cmd(g, fs.Args()[1:], stdout)
}

// attachUser rewrites -uUID[:GID] before the command as --user=UID[:GID]:
// argp takes an optional argument attached to its short option, pflag only
// after "=".
func attachUser(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if _, isCommand := commands[a]; isCommand {
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] == 'u' && a[2] != '=' {
			out[i] = "--user=" + a[2:]
		}
	}
	return out
}

// newFlagSet returns a flag set that reports errors instead of exiting,
// with argp's -?/--help.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	fs.BoolP("help", "?", false, "Give this help list")
	return fs
}

// parse parses args; --help prints the synopsis and the options and
// returns pflag.ErrHelp.
func parse(fs *pflag.FlagSet, synopsis string, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	if help, _ := fs.GetBool("help"); help || errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: %s\n\nOptions:\n", synopsis)
		printOptions(stdout, fs)
		return pflag.ErrHelp
	}
	if err != nil {
		return usageError{err}
	}
	return nil
}

// printOptions lists the options as argp does: "-d, --debug=FILE",
// "--user[=UID[:GID]]" for an optional argument.
func printOptions(w io.Writer, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		arg, usage := pflag.UnquoteUsage(f)
		switch {
		case f.NoOptDefVal == "true": // a switch
			arg = ""
		case f.NoOptDefVal != "":
			arg = "[=" + arg + "]"
		default:
			arg = "=" + arg
		}
		short := "    "
		if f.Shorthand != "" {
			short = "-" + f.Shorthand + ", "
		}
		fmt.Fprintf(w, "  %s%-28s %s\n", short, "--"+f.Name+arg, usage)
	})
}

// positional checks the number of positional arguments.
func positional(fs *pflag.FlagSet, n int) error {
	if fs.NArg() != n {
		return usageError{fmt.Errorf("%s takes %d argument(s), got %d: %q", fs.Name(), n, fs.NArg(), fs.Args())}
	}
	return nil
}

// progName is the name errors are printed under, as warnx does.
func progName() string { return filepath.Base(os.Args[0]) }
