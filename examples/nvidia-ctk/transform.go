package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"tags.cncf.io/container-device-interface/pkg/cdi"

	"github.com/go-nvc/nvc/nvcontainer/cdispec"
)

// transformCommand runs `cdi transform root`: a spec's paths under --from
// moved under --to.
func transformCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "root" {
		return errUsage
	}
	fs := newFlagSet("nvidia-ctk cdi transform root", stderr)
	from := fs.String("from", "/", "the root the spec's paths are under")
	to := fs.String("to", "/", "the root they are moved to")
	relative := fs.String("relative-to", "host", "which paths move: host or container")
	input := fs.StringP("input", "i", "-", "the spec `FILE` read (-: stdin)")
	output := fs.StringP("output", "o", "", "write the spec to `FILE` (default: stdout)")
	format := fs.String("format", "", "spec encoding, json or yaml (default: from the --output, else the --input extension, else yaml)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cdi transform root: unexpected arguments %q", fs.Args())
	}
	if *relative != "host" && *relative != "container" {
		return fmt.Errorf("cdi transform root: unknown --relative-to %q (want host or container)", *relative)
	}
	data, err := readInput(*input)
	if err != nil {
		return fmt.Errorf("cdi transform root: %w", err)
	}
	spec, err := cdi.ParseSpec(data)
	if err != nil {
		return fmt.Errorf("cdi transform root: %s: %w", *input, err)
	}
	if err := cdispec.TransformRoot(spec, *from, *to, *relative == "container"); err != nil {
		return fmt.Errorf("cdi transform root: %w", err)
	}
	out, err := cdispec.Marshal(spec, transformFormat(*format, *output, *input))
	if err != nil {
		return fmt.Errorf("cdi transform root: %w", err)
	}
	if *output == "" {
		_, err = stdout.Write(out)
		return err
	}
	if err := replaceFile(*output, out); err != nil {
		return fmt.Errorf("cdi transform root: %w", err)
	}
	return nil
}

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(os.Stdin, 16<<20))
	}
	if name == "" {
		return nil, errors.New("--input is empty")
	}
	return os.ReadFile(name)
}

// transformFormat is --format, else the extension of the output, else of
// the input, else yaml.
func transformFormat(format, output, input string) string {
	if format != "" {
		return format
	}
	for _, name := range []string{output, input} {
		switch strings.TrimPrefix(filepath.Ext(name), ".") {
		case "json":
			return cdispec.FormatJSON
		case "yaml", "yml":
			return cdispec.FormatYAML
		}
	}
	return cdispec.FormatYAML
}
