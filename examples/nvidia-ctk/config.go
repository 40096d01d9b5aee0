package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// configCommand runs `config` (print or edit the toolkit's config.toml
// with --set) and `config default`.
func configCommand(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	if len(args) > 0 && (args[0] == "default" || args[0] == "create-default" || args[0] == "generate-default") {
		return configDefault(args[1:], stdout, stderr)
	}
	flags := newFlagSet("nvidia-ctk config", stderr)
	var file, output, sep string
	var sets []string
	var inPlace bool
	flags.StringVarP(&file, "config-file", "c", toolkit.DefaultConfigPath, "the config `FILE` read (missing: the defaults)")
	flags.StringArrayVar(&sets, "set", nil, "set `KEY=VALUE` (a dotted key; a bool key alone is true; repeatable)")
	flags.StringVar(&file, "config", toolkit.DefaultConfigPath, "alias of --config-file")
	flags.StringVar(&sep, "set-list-separator", ":", "what splits a list value of --set (the toolkit's default)")
	flags.BoolVarP(&inPlace, "in-place", "i", false, "write the result back to --config-file")
	flags.StringVarP(&output, "output", "o", "", "write the result to `FILE` (default: stdout)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("config: unexpected arguments %q", flags.Args())
	}
	if inPlace && output != "" {
		return errors.New("config: --in-place and --output cannot be combined")
	}
	old, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = toolkit.DefaultConfigTOML()
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	out, err := toolkit.SetConfig(old, sets, sep)
	if err != nil {
		return fmt.Errorf("config: %s: %w", file, err)
	}
	if inPlace {
		output = file
	}
	return writeOutput(output, out, stdout, log)
}

func configDefault(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nvidia-ctk config default", stderr)
	output := fs.StringP("output", "o", "", "write the config to `FILE` (default: stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("config default: unexpected arguments %q", fs.Args())
	}
	out, err := toolkit.DefaultConfigTOML()
	if err != nil {
		return fmt.Errorf("config default: %w", err)
	}
	return writeOutput(*output, out, stdout, nil)
}

// writeOutput writes data to file (replacing it), or to stdout when file
// is empty.
func writeOutput(file string, data []byte, stdout io.Writer, log *slog.Logger) error {
	if file == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := replaceFile(file, data); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if log != nil {
		log.Info("wrote the config", "file", file)
	}
	return nil
}
