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

// switches are the options that set booleans (-i is accepted and does
// nothing: there is no auxiliary cache).
func (o *options) switches() map[byte][]*bool {
	return map[byte][]*bool{'p': {&o.print}, 'v': {&o.verbose}, 'N': {&o.noCache}, 'X': {&o.noLinks},
		'n': {&o.noCache, &o.onlyDirs}, 'i': nil}
}

// values are the options that take an argument, but for -c.
func (o *options) values() map[byte]*string {
	return map[byte]*string{'C': &o.cache, 'r': &o.root, 'f': &o.config, 'G': &o.generator}
}

func (o *options) takesArg(c byte) bool {
	_, ok := o.values()[c]
	return ok || c == 'c'
}

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

// nextArg takes the word after args[*i] as an option's argument.
func nextArg(args []string, i *int) (string, bool) {
	if *i+1 >= len(args) {
		return "", false
	}
	*i++
	return args[*i], true
}

func (o *options) long(s string, args []string, i *int) error {
	name, val, hasVal := strings.Cut(s, "=")
	c, ok := longFlags[name]
	if !ok {
		return fmt.Errorf("unrecognized option '--%s'", name)
	}
	if o.takesArg(c) && !hasVal {
		if val, ok = nextArg(args, i); !ok {
			return fmt.Errorf("option '--%s' requires an argument", name)
		}
	}
	return o.set(c, val)
}

func (o *options) short(s string, args []string, i *int) error {
	for j := 0; j < len(s); j++ {
		c := s[j]
		if !o.takesArg(c) {
			if err := o.set(c, ""); err != nil {
				return err
			}
			continue
		}
		val, ok := s[j+1:], true
		if val == "" {
			if val, ok = nextArg(args, i); !ok {
				return fmt.Errorf("option requires an argument -- '%c'", c)
			}
		}
		return o.set(c, val)
	}
	return nil
}

func (o *options) set(c byte, val string) error {
	if bools, ok := o.switches()[c]; ok {
		for _, b := range bools {
			*b = true
		}
		return nil
	}
	if p, ok := o.values()[c]; ok {
		*p = val
		return nil
	}
	if c != 'c' {
		return fmt.Errorf("invalid option -- '%c'", c)
	}
	f, ok := ldcache.ParseFormat(val)
	if !ok {
		return fmt.Errorf("unknown cache format %q (want new, compat or old)", val)
	}
	o.format = f
	return nil
}
