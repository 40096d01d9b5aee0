package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-nvc/nvc/ldcache"
)

const defaultCache = "/etc/ld.so.cache"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err == nil {
		if o.print {
			err = printCache(o, stdout)
		} else {
			err = buildCache(o, stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ldconfig: %v\n", err)
		return 1
	}
	return 0
}

func (o *options) cacheFile() string {
	if o.cache == "" {
		return defaultCache
	}
	return o.cache
}

func (o *options) rootDir() string {
	if strings.Trim(o.root, "/") == "" {
		return "/"
	}
	return o.root
}

func printCache(o *options, w io.Writer) error {
	name := o.cacheFile()
	c, err := ldcache.OpenInRoot(o.rootDir(), name)
	if errors.Is(err, ldcache.ErrEmpty) {
		return nil // glibc prints nothing for an empty file
	}
	if err != nil {
		return err
	}
	return c.Print(w, name)
}

func buildCache(o *options, w io.Writer) error {
	if !o.noCache {
		for _, d := range o.dirs {
			if !strings.HasPrefix(d, "/") {
				return fmt.Errorf("relative path `%s' used to build cache", d)
			}
		}
	}
	bo := &ldcache.BuildOptions{
		Config: o.config, Dirs: o.dirs, OnlyDirs: o.onlyDirs, NoLinks: o.noLinks,
		Format: o.format, Generator: o.generator,
	}
	if o.verbose {
		bo.Verbose = w
	}
	c, err := ldcache.Build(context.Background(), o.rootDir(), bo)
	if err != nil || o.noCache {
		return err
	}
	return ldcache.WriteFileInRoot(o.rootDir(), o.cacheFile(), c)
}
