package nvcli

import (
	"slices"
	"strings"
	"unicode"
)

// The columns of glibc argp's help: options at 2, their docs at 29, text
// lines shorter than 79 characters, usage lines up to 79 with
// continuation lines at 12.
const (
	docColumn   = 29
	rightMargin = 79
	usageIndent = 12
)

// sorted returns the options (the builtins included) in argp's order:
// by the first short letter, or the long name's first letter for a
// long-only option, ignoring case; on a tie the long-only option first,
// then the lower-case letter, then the long names.
func (p *argp) sorted() []option {
	opts := append(slices.Clone(p.opts), p.builtins(&result{})...)
	slices.SortStableFunc(opts, func(a, b option) int {
		fa, fb := firstChar(a), firstChar(b)
		if d := int(unicode.ToLower(rune(fa))) - int(unicode.ToLower(rune(fb))); d != 0 {
			return d
		}
		if (a.short == 0) != (b.short == 0) {
			if a.short == 0 {
				return -1
			}
			return 1
		}
		if fa != fb {
			return int(fb) - int(fa) // lower case first
		}
		return strings.Compare(strings.ToLower(a.long), strings.ToLower(b.long))
	})
	return opts
}

func firstChar(o option) byte {
	if o.short != 0 {
		return o.short
	}
	return o.long[0]
}

// helpText is what --help prints.
func (p *argp) helpText() string {
	pre, post, _ := strings.Cut(p.doc, "\v")
	var b strings.Builder
	b.WriteString(p.shortUsage() + "\n")
	writeParagraphs(&b, pre)
	if len(p.commands) > 0 {
		b.WriteString("\n Commands:\n")
		for _, c := range p.commands {
			b.WriteString(entry("  "+c[0], c[1]))
		}
	}
	b.WriteString("\n Options:\n")
	withArg := false
	for _, o := range p.sorted() {
		b.WriteString(entry(optionColumn(o), o.doc))
		withArg = withArg || o.arg != ""
	}
	if withArg {
		b.WriteString("\n" + fill("", "Mandatory or optional arguments to long options are also mandatory or optional for any corresponding short options.", 0))
	}
	if post != "" {
		b.WriteString("\n")
		writeParagraphs(&b, post)
	}
	return b.String()
}

// optionColumn is "  -d, --debug=FILE", "      --user[=UID[:GID]]".
func optionColumn(o option) string {
	if o.short != 0 {
		return "  -" + string(o.short) + ", " + longForm(o)
	}
	return "      " + longForm(o)
}

// longForm is "--debug=FILE", "--user[=UID[:GID]]", "--csv".
func longForm(o option) string {
	switch {
	case o.arg == "":
		return "--" + o.long
	case o.optional:
		return "--" + o.long + "[=" + o.arg + "]"
	}
	return "--" + o.long + "=" + o.arg
}

// entry is one option or command with its doc at the doc column (three
// spaces after an option that reaches it).
func entry(col, doc string) string {
	if len(col) < docColumn {
		col += strings.Repeat(" ", docColumn-len(col))
	} else {
		col += "   "
	}
	return fill(col, doc, docColumn)
}

// usageText is what --usage prints: every option in brackets, the short
// switches clustered first.
func (p *argp) usageText() string {
	opts := p.sorted()
	var items []string
	var cluster string
	for _, o := range opts {
		if o.short != 0 && o.arg == "" {
			cluster += string(o.short)
		}
	}
	if cluster != "" {
		items = append(items, "[-"+cluster+"]")
	}
	for _, o := range opts {
		switch {
		case o.short == 0 || o.arg == "":
		case o.optional:
			items = append(items, "[-"+string(o.short)+"["+o.arg+"]]")
		default:
			items = append(items, "[-"+string(o.short)+" "+o.arg+"]")
		}
	}
	for _, o := range opts {
		items = append(items, "["+longForm(o)+"]")
	}
	if p.argsDoc != "" {
		items = append(items, p.argsDoc)
	}
	line := "Usage: " + p.name
	var b strings.Builder
	for _, it := range items {
		if len(line)+1+len(it) > rightMargin {
			b.WriteString(line + "\n")
			line = strings.Repeat(" ", usageIndent-1)
		}
		line += " " + it
	}
	b.WriteString(line + "\n")
	return b.String()
}

// shortUsage is argp_usage's line: "Usage: NAME [OPTION...] ARGS".
func (p *argp) shortUsage() string {
	return strings.TrimSpace("Usage: " + p.name + " [OPTION...] " + p.argsDoc)
}

func writeParagraphs(b *strings.Builder, text string) {
	for _, line := range strings.Split(text, "\n") {
		b.WriteString(fill("", line, 0))
	}
}

// fill writes prefix and then the words of text, broken into lines of at
// most rightMargin-1 characters, continuation lines indented; it ends with
// a newline.
func fill(prefix, text string, indent int) string {
	var b strings.Builder
	line := prefix
	for i, word := range strings.Fields(text) {
		switch {
		case i == 0:
			line += word
		case len(line)+1+len(word) >= rightMargin:
			b.WriteString(line + "\n")
			line = strings.Repeat(" ", indent) + word
		default:
			line += " " + word
		}
	}
	b.WriteString(line + "\n")
	return b.String()
}
