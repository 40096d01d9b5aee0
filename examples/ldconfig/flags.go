package main

import (
	"fmt"
	"strings"

	"github.com/go-nvc/nvc/ldcache"
)

// options are ldconfig's command line, parsed as glibc's argp parses it:
// short options may be grouped (-pv) and take their argument attached or
// as the next word (-C/x, -C /x), long options take "=ARG" or the next
// word, and options may follow directory arguments.
type options struct {
	print, verbose, noCache, noLinks, onlyDirs bool
	root, cache, config, generator             string
	format                                     ldcache.Format
	dirs                                       []string
}

var longFlags = map[string]byte{
	"print-cache": 'p', "verbose": 'v', "format": 'c', "ignore-aux-cache": 'i',
	"generator": 'G', // ours: the generator string to record
}

func takesArg(c byte) bool { return strings.IndexByte("CrfcG", c) >= 0 }

func parseArgs(args []string) (*options, error) {
	o := &options{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.dirs = append(o.dirs, args[i+1:]...)
			return o, nil
		case strings.HasPrefix(a, "--"):
			if err := o.long(a[2:], args, &i); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-':
			if err := o.short(a[1:], args, &i); err != nil {
				return nil, err
			}
		default:
			o.dirs = append(o.dirs, a)
		}
	}
	return o, nil
}

func (o *options) long(s string, args []string, i *int) error {
	name, val, hasVal := strings.Cut(s, "=")
	c, ok := longFlags[name]
	if !ok {
		return fmt.Errorf("unrecognized option '--%s'", name)
	}
	if takesArg(c) && !hasVal {
		if *i+1 >= len(args) {
			return fmt.Errorf("option '--%s' requires an argument", name)
		}
		*i++
		val = args[*i]
	}
	return o.set(c, val)
}

func (o *options) short(s string, args []string, i *int) error {
	for j := 0; j < len(s); j++ {
		c := s[j]
		if !takesArg(c) {
			if err := o.set(c, ""); err != nil {
				return err
			}
			continue
		}
		val := s[j+1:]
		if val == "" {
			if *i+1 >= len(args) {
				return fmt.Errorf("option requires an argument -- '%c'", c)
			}
			*i++
			val = args[*i]
		}
		return o.set(c, val)
	}
	return nil
}

func (o *options) set(c byte, val string) error {
	switch c {
	case 'p':
		o.print = true
	case 'v':
		o.verbose = true
	case 'N':
		o.noCache = true
	case 'X':
		o.noLinks = true
	case 'n':
		o.noCache, o.onlyDirs = true, true
	case 'i':
	case 'C':
		o.cache = val
	case 'r':
		o.root = val
	case 'f':
		o.config = val
	case 'G':
		o.generator = val
	case 'c':
		f, ok := ldcache.ParseFormat(val)
		if !ok {
			return fmt.Errorf("unknown cache format %q (want new, compat or old)", val)
		}
		o.format = f
	default:
		return fmt.Errorf("invalid option -- '%c'", c)
	}
	return nil
}
