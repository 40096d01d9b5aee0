package nvcli

import (
	"fmt"
	"strings"
)

// option is one entry of an argp option table: a long name, an optional
// short letter, an argument name ("" for a switch) that may be optional,
// the --help text, and what it sets.
type option struct {
	long     string
	short    byte
	arg      string
	optional bool
	doc      string
	set      func(value string) error
}

// argp is one parser, as argp_parse runs it: the global one in order
// (ARGP_IN_ORDER: options end at the first non-option), a command's with
// glibc getopt's permutation (options and operands mixed, "--" ends the
// options). The builtin -?/--help, --usage and -V/--version are added.
type argp struct {
	// name is argp's state->name: "nvidia-container-cli" or
	// "nvidia-container-cli list"; argv0 is getopt's message prefix
	// (argv[0] as given, for the global parser).
	name, argv0 string
	argsDoc     string // "COMMAND [ARG...]", "ROOTFS"
	doc         string // the text under Usage:; after "\v", the text after the options
	opts        []option
	commands    [][2]string // the global parser's "Commands:" entries (name, doc)
	inOrder     bool
}

// result is what one argp run found: the operands, or a request for
// help, usage or the version.
type result struct {
	operands []string
	help     string // --help or --usage text
	version  bool
}

// run parses args (args[0] is the program or command name).
func (p *argp) run(args []string) (*result, error) {
	r := &result{}
	builtin := p.builtins(r)
	all := append(append([]option(nil), p.opts...), builtin...)
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			r.operands = append(r.operands, args[i+1:]...)
			return r, nil
		case len(a) < 2 || a[0] != '-':
			if p.inOrder {
				r.operands = append(r.operands, args[i:]...)
				return r, nil
			}
			r.operands = append(r.operands, a)
		case a[1] == '-':
			var err error
			if i, err = p.long(all, args, i); err != nil {
				return nil, err
			}
		default:
			var err error
			if i, err = p.shorts(all, args, i); err != nil {
				return nil, err
			}
		}
		if r.help != "" || r.version {
			return r, nil
		}
	}
	return r, nil
}

func (p *argp) builtins(r *result) []option {
	return []option{
		{long: "help", short: '?', doc: "Give this help list", set: func(string) error { r.help = p.helpText(); return nil }},
		{long: "usage", doc: "Give a short usage message", set: func(string) error { r.help = p.usageText(); return nil }},
		{long: "version", short: 'V', doc: "Print program version", set: func(string) error { r.version = true; return nil }},
	}
}

// long parses args[i], a "--name[=value]" option, as glibc's getopt_long:
// an exact name, else a unique prefix; the value after "=" or, for a
// required argument, in the next word. It returns the last word used.
func (p *argp) long(opts []option, args []string, i int) (int, error) {
	text := args[i][2:]
	name, value, hasValue := strings.Cut(text, "=")
	o, err := p.lookupLong(opts, name, text)
	if err != nil {
		return i, err
	}
	switch {
	case o.arg == "" && hasValue:
		return i, p.usageErr("option '--%s' doesn't allow an argument", o.long)
	case o.arg != "" && !hasValue && !o.optional:
		if i+1 >= len(args) {
			return i, p.usageErr("option '--%s' requires an argument", o.long)
		}
		i++
		value, hasValue = args[i], true
	}
	return i, o.set(value)
}

func (p *argp) lookupLong(opts []option, name, text string) (*option, error) {
	var matches []*option
	for k := range opts {
		switch o := &opts[k]; {
		case o.long == name:
			return o, nil
		case strings.HasPrefix(o.long, name):
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 0:
		return nil, p.usageErr("unrecognized option '--%s'", text)
	case 1:
		return matches[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "option '--%s' is ambiguous; possibilities:", text)
	for _, o := range matches {
		fmt.Fprintf(&b, " '--%s'", o.long)
	}
	return nil, p.usageErr("%s", b.String())
}

// shorts parses args[i], a cluster of short options ("-ld0"): an option
// with an argument takes the rest of the word or, when required, the
// next word. It returns the last word used.
func (p *argp) shorts(opts []option, args []string, i int) (int, error) {
	word := args[i]
	for j := 1; j < len(word); j++ {
		o := lookupShort(opts, word[j])
		switch {
		case o == nil:
			return i, p.usageErr("invalid option -- '%c'", word[j])
		case o.arg == "":
			if err := o.set(""); err != nil {
				return i, err
			}
			continue
		case j+1 < len(word):
			return i, o.set(word[j+1:])
		case o.optional:
			return i, o.set("")
		case i+1 >= len(args):
			return i, p.usageErr("option requires an argument -- '%c'", word[j])
		}
		return i + 1, o.set(args[i+1])
	}
	return i, nil
}

func lookupShort(opts []option, c byte) *option {
	for k := range opts {
		if opts[k].short == c {
			return &opts[k]
		}
	}
	return nil
}

// usageErr is getopt's message under the program's name, then argp's
// pointer to --help and --usage.
func (p *argp) usageErr(format string, a ...any) error {
	return &UsageError{msg: p.argv0 + ": " + fmt.Sprintf(format, a...) + "\n" + p.tryText()}
}

// tooMany is argp's error for an operand no parser takes.
func (p *argp) tooMany() error {
	return &UsageError{msg: p.name + ": Too many arguments\n" + p.tryText()}
}

// usage is argp_usage: the short usage line, then the pointer to --help.
func (p *argp) usage() error {
	return &UsageError{msg: p.shortUsage() + "\n" + p.tryText()}
}

func (p *argp) tryText() string {
	return fill("", fmt.Sprintf("Try `%s --help' or `%s --usage' for more information.", p.name, p.name), 0)
}
