package ldcache

import (
	"bufio"
	"fmt"
	"io"
)

// verbose writes ldconfig -v's standard output; a nil *verbose writes
// nothing.
type verbose struct{ w *bufio.Writer }

func newVerbose(w io.Writer) *verbose {
	if w == nil {
		return nil
	}
	return &verbose{w: bufio.NewWriter(w)}
}

func (v *verbose) dir(d *dirEnt, hwcap uint64) {
	if v == nil {
		return
	}
	switch {
	case d.hwcaps != "":
		fmt.Fprintf(v.w, "%s: (hwcap: \"%s\")", d.path, d.hwcaps)
	case hwcap != 0:
		fmt.Fprintf(v.w, "%s: (hwcap: 0x%016x)", d.path, hwcap)
	default:
		fmt.Fprintf(v.w, "%s:", d.path)
	}
	fmt.Fprintf(v.w, " (from %s:%d)\n", d.from, d.line)
}

func (v *verbose) link(soname, libname string) {
	if v != nil {
		fmt.Fprintf(v.w, "\t%s -> %s", soname, libname)
	}
}

func (v *verbose) linkDone(suffix string) {
	if v != nil {
		fmt.Fprintf(v.w, "%s\n", suffix)
	}
}

func (v *verbose) hwcapsLib(soname, name string) {
	if v != nil {
		fmt.Fprintf(v.w, "\t%s -> %s\n", soname, name)
	}
}

func (v *verbose) flush() error {
	if v == nil {
		return nil
	}
	return v.w.Flush()
}
