package nvcli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
)

// The commands of nvidia-container-cli.
const (
	CommandInfo      = "info"
	CommandList      = "list"
	CommandConfigure = "configure"
)

// Command is an nvidia-container-cli command line, parsed as argp parses
// it (see [Parse]).
type Command struct {
	// Prog is the program's name as errors are printed under it: the
	// base name of argv[0].
	Prog string
	// Name is CommandInfo, CommandList or CommandConfigure; "" when Help
	// is set or Version is true.
	Name string
	// Help is what --help or --usage asked for: print it on stdout and
	// exit 0. "": none.
	Help string
	// Version is -V or --version: print [WriteVersion] and exit 0.
	Version bool

	// Global are the options before the command.
	Global Global
	// Driver holds the command's --no-persistenced, --no-fabricmanager
	// and --no-gsp-firmware (list and configure); other fields are zero.
	Driver driver.Options
	// Info is info's --csv.
	Info InfoOptions
	// List is list's options, a bare list already made
	// DefaultListOptions and --imex-channel already read.
	List ListOptions
	// Configure is configure's options.
	Configure ConfigureOptions

	listIMEX []string // list's --imex-channel values
}

// Global are nvidia-container-cli's global options, and nvc's own
// --proc-root and --dev-root. Zero values are the defaults.
type Global struct {
	// Debug is --debug FILE; "": none (see [Global.DebugFile]).
	Debug string
	// LoadKmods is --load-kmods; NoPivot is --no-pivot (accepted; nvc runs
	// nothing in the container); NoCreateIMEXChannels is
	// --no-create-imex-channels.
	LoadKmods, NoPivot, NoCreateIMEXChannels bool
	// User is --user's value, "" without one or with no value, and
	// UserGiven says --user was given. As in libnvidia-container it is
	// the identity of the NVML helper process only (see
	// [Global.NVMLHelperUser]), which a build without cgo runs
	// (devices.NewNVMLHelper); a cgo build loads NVML in process and does
	// not use it. Who owns the files created in the container does not
	// depend on it, there or here: the container's root (the owner of
	// /proc/PID).
	User      string
	UserGiven bool
	// Root and LDCache are --root and --ldcache ("": / and
	// /etc/ld.so.cache). ProcRoot and DevRoot are nvc's --proc-root and
	// --dev-root ("": /proc and the root's /dev).
	Root, LDCache, ProcRoot, DevRoot string
}

// ConfigureOptions are configure's options and its ROOTFS.
type ConfigureOptions struct {
	// Flags are the options that make the request.
	Flags ConfigureFlags
	// PID is --pid; 0: none (standalone mode, see [Container]).
	PID int
	// Rootfs is ROOTFS, as given.
	Rootfs string
	// LDConfig is --ldconfig (accepted: nvc writes the cache in Go).
	LDConfig string
	// NoCgroups and NoDevbind are --no-cgroups and --no-devbind.
	NoCgroups, NoDevbind bool
	// DryRun is nvc's --dry-run: print the plan, change nothing.
	DryRun bool
}

// Option is an option a program adds to the global ones (nvc's example
// adds --simulate); it is parsed and listed by --help as the others are.
type Option struct {
	// Name is the long name, without "--".
	Name string
	// Arg names the value in --help ("MACHINE"); "": a switch.
	Arg string
	// Doc is the --help text.
	Doc string
	// Set receives the value ("" for a switch). An error is printed as
	// an input error.
	Set func(value string) error
}

// ParseOptions are what a program adds to the command line. nil: none.
type ParseOptions struct {
	// Global are options added after the global ones.
	Global []Option
	// ConfigureDoc is text --help prints after configure's options
	// ("": none).
	ConfigureDoc string
}

// Parse parses a command line (args[0] is the program) as
// nvidia-container-cli's argp parsers do: the global options in order up
// to the command (so a global option after it is the command's, or
// unknown), then the command's options and operands in any order, "--"
// ending the options; short options cluster (-ld0) and take an attached
// value (-uUID is --user=UID), a long option may be abbreviated to a
// unique prefix. -?/--help, --usage and -V/--version are accepted before
// and after the command.
//
// A command line argp refuses is a *[UsageError] carrying argp's and
// getopt's words ("nvidia-container-cli list: unrecognized option '--x'",
// "Usage: …", "Try `… --help' or `… --usage' for more information.");
// a value an option refuses (--pid, --imex-channel of list) is an *[Error].
// nvidia-container-cli exits with status 1 after either (see [Report]).
func Parse(args []string, opts *ParseOptions) (*Command, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	argv0 := "nvidia-container-cli"
	if len(args) > 0 {
		argv0 = args[0]
	} else {
		args = []string{argv0}
	}
	c := &Command{Prog: filepath.Base(argv0)}
	p := c.globalParser(argv0, opts.Global)
	r, err := p.run(args)
	if err != nil || r.help != "" || r.version {
		return c.done(r, err)
	}
	if len(r.operands) == 0 {
		return nil, p.usage()
	}
	sub := c.commandParser(r.operands[0], opts.ConfigureDoc)
	if sub == nil {
		return nil, p.usage()
	}
	words := r.operands
	if r, err = sub.run(words); err != nil || r.help != "" || r.version {
		return c.done(r, err)
	}
	c.Name = words[0]
	if err := c.finish(sub, r.operands, len(words)); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Command) done(r *result, err error) (*Command, error) {
	if err != nil {
		return nil, err
	}
	c.Help, c.Version = r.help, r.version
	return c, nil
}

func (c *Command) globalParser(argv0 string, extra []Option) *argp {
	g := &c.Global
	p := &argp{name: c.Prog, argv0: argv0, argsDoc: "COMMAND [ARG...]", inOrder: true,
		doc: "Command line utility for manipulating NVIDIA GPU containers.",
		commands: [][2]string{{"configure", "Configure a container with GPU support"},
			{"info", "Report information about the driver and devices"}, {"list", "List driver components"}},
		opts: []option{
			{long: "debug", short: 'd', arg: "FILE", doc: "Log debug information", set: setString(&g.Debug)},
			{long: "load-kmods", short: 'k', doc: "Load kernel modules", set: setTrue(&g.LoadKmods)},
			{long: "no-pivot", short: 'n', doc: "Do not use pivot_root", set: setTrue(&g.NoPivot)},
			{long: "user", short: 'u', arg: "UID[:GID]", optional: true, doc: "User and group to use for privilege separation", set: func(v string) error { g.User, g.UserGiven = v, true; return nil }},
			{long: "root", short: 'r', arg: "PATH", doc: "Path to the driver root directory", set: setString(&g.Root)},
			{long: "ldcache", short: 'l', arg: "FILE", doc: "Path to the system's DSO cache", set: setString(&g.LDCache)},
			{long: "no-create-imex-channels", doc: "Don't automatically create IMEX channel device nodes", set: setTrue(&g.NoCreateIMEXChannels)},
			{long: "proc-root", arg: "DIR", doc: "Read the host's procfs from DIR (nvc)", set: setString(&g.ProcRoot)},
			{long: "dev-root", arg: "DIR", doc: "Read the host's device nodes from DIR (nvc)", set: setString(&g.DevRoot)},
		}}
	for _, o := range extra {
		set := o.Set
		p.opts = append(p.opts, option{long: o.Name, arg: o.Arg, doc: o.Doc, set: func(v string) error {
			return wrap(PrefixInput, set(v))
		}})
	}
	return p
}

// commandParser is the parser of the command name; nil: no such command.
func (c *Command) commandParser(name, configureDoc string) *argp {
	p := &argp{name: c.Prog + " " + name}
	p.argv0 = p.name
	switch name {
	case CommandInfo:
		p.doc = "Query the driver and report its information as well as the devices it detected."
		p.opts = []option{{long: "csv", doc: "Output in CSV format", set: setTrue(&c.Info.CSV)}}
	case CommandList:
		p.doc = "Query the driver and list the components required in order to configure a container with GPU support."
		p.opts = append(c.listOptions(), c.driverOptions()...)
	case CommandConfigure:
		p.argsDoc = "ROOTFS"
		p.doc = configureDoc0
		if configureDoc != "" {
			p.doc += "\v" + configureDoc
		}
		p.opts = append(c.configureOptions(), c.driverOptions()...)
	default:
		return nil
	}
	return p
}

const configureDoc0 = "Configure a container with GPU support by exposing device drivers to it.\n\n" +
	"This command enters the namespace of the container process referred by PID (or the current parent process if none specified) " +
	"and performs the necessary steps to ensure that the given capabilities are available inside the container.\n" +
	"It is assumed that the container has been created but not yet started, and the host filesystem is accessible (i.e. chroot/pivot_root hasn't been called)."

func (c *Command) driverOptions() []option {
	d := &c.Driver
	return []option{
		{long: "no-persistenced", doc: "Don't include the NVIDIA persistenced socket", set: setTrue(&d.NoPersistenced)},
		{long: "no-fabricmanager", doc: "Don't include the NVIDIA fabricmanager socket", set: setTrue(&d.NoFabricManager)},
		{long: "no-gsp-firmware", doc: "Don't include GSP firmware", set: setTrue(&d.NoGSPFirmware)},
	}
}

// NVMLHelperUser is the identity for devices.NVMLHelperOptions.User, as
// libnvidia-container's --user: without --user "" (the overflow ids,
// 65534:65534, when run by root; the caller otherwise), --user with no
// value the caller's effective uid and gid, else its value.
func (g *Global) NVMLHelperUser() string {
	if g.UserGiven && g.User == "" {
		return strconv.Itoa(os.Geteuid()) + ":" + strconv.Itoa(os.Getegid())
	}
	return g.User
}

func setString(p *string) func(string) error {
	return func(v string) error { *p = v; return nil }
}

func setTrue(p *bool) func(string) error {
	return func(string) error { *p = true; return nil }
}

func appendTo(p *[]string) func(string) error {
	return func(v string) error { *p = append(*p, v); return nil }
}

func addCap(s *capabilities.Set, c capabilities.Capability) func(string) error {
	return func(string) error { *s |= capabilities.Of(c); return nil }
}

func setPID(p *int) func(string) error {
	return func(v string) error {
		pid, err := strconv.Atoi(v)
		if err != nil || pid <= 0 {
			return &Error{PrefixInput, fmt.Errorf("invalid pid %q", v)}
		}
		*p = pid
		return nil
	}
}
