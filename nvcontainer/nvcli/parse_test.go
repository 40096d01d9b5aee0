package nvcli_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// try is glibc argp's pointer to --help and --usage for name, wrapped at
// 79 columns as argp wraps it.
func try(name string) string {
	switch name {
	case "nvidia-container-cli":
		return "Try `nvidia-container-cli --help' or `nvidia-container-cli --usage' for more\ninformation."
	case "nvidia-container-cli configure":
		return "Try `nvidia-container-cli configure --help' or `nvidia-container-cli configure\n--usage' for more information."
	}
	return "Try `" + name + " --help' or `" + name + " --usage'\nfor more information."
}

// TestParseUsageErrors: a command line argp refuses prints what glibc's
// argp and getopt print (checked against a program built on glibc 2.36's
// argp with nvidia-container-cli's option tables) and exits 1, as
// libnvidia-container sets argp_err_exit_status to EXIT_FAILURE.
func TestParseUsageErrors(t *testing.T) {
	const usage = "Usage: nvidia-container-cli [OPTION...] COMMAND [ARG...]\n"
	tests := []struct {
		name string
		args string
		want string
	}{
		{"unknown long option", "list --x", "nvidia-container-cli list: unrecognized option '--x'\n" + try("nvidia-container-cli list")},
		{"unknown long option with value", "info --json=1", "nvidia-container-cli info: unrecognized option '--json=1'\n" + try("nvidia-container-cli info")},
		{"unknown global option", "--x info", "nvidia-container-cli: unrecognized option '--x'\n" + try("nvidia-container-cli")},
		{"global option after the command", "list --root=/x", "nvidia-container-cli list: unrecognized option '--root=/x'\n" + try("nvidia-container-cli list")},
		{"unknown short option", "list -x", "nvidia-container-cli list: invalid option -- 'x'\n" + try("nvidia-container-cli list")},
		{"missing short value", "-d", "nvidia-container-cli: option requires an argument -- 'd'\n" + try("nvidia-container-cli")},
		{"missing long value", "list --device", "nvidia-container-cli list: option '--device' requires an argument\n" + try("nvidia-container-cli list")},
		{"abbreviated, missing value", "configure --pi", "nvidia-container-cli configure: option '--pid' requires an argument\n" + try("nvidia-container-cli configure")},
		{"value for a switch", "list --compat32=1", "nvidia-container-cli list: option '--compat32' doesn't allow an argument\n" + try("nvidia-container-cli list")},
		{"ambiguous", "list --mig 1", "nvidia-container-cli list: option '--mig' is ambiguous; possibilities: '--mig-config' '--mig-monitor'\n" + try("nvidia-container-cli list")},
		{"no command", "", usage + try("nvidia-container-cli")},
		{"unknown command", "setup", usage + try("nvidia-container-cli")},
		{"no rootfs", "configure --pid=1", "Usage: nvidia-container-cli configure [OPTION...] ROOTFS\n" + try("nvidia-container-cli configure")},
		{"two rootfs", "configure /a /b", "Usage: nvidia-container-cli configure [OPTION...] ROOTFS\n" + try("nvidia-container-cli configure")},
		{"info operand", "info foo", "nvidia-container-cli info: Too many arguments\n" + try("nvidia-container-cli info")},
		{"list operand after --", "list -- -x", "nvidia-container-cli list: Too many arguments\n" + try("nvidia-container-cli list")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nvcli.Parse(append([]string{"nvidia-container-cli"}, strings.Fields(tc.args)...), nil)
			var ue *nvcli.UsageError
			require.ErrorAs(t, err, &ue)
			var stderr bytes.Buffer
			assert.Equal(t, 1, nvcli.Report(&stderr, "nvidia-container-cli", err), "exit status")
			assert.Equal(t, tc.want+"\n", stderr.String())
		})
	}
	t.Run("argv0 as given", func(t *testing.T) {
		_, err := nvcli.Parse([]string{"/usr/bin/nvidia-container-cli", "--x"}, nil)
		require.Error(t, err)
		assert.Equal(t, "/usr/bin/nvidia-container-cli: unrecognized option '--x'\n"+try("nvidia-container-cli"), err.Error())
	})
}

// TestParse: command lines and what they parse to.
func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		args  string
		check func(t *testing.T, c *nvcli.Command)
	}{
		{"global options in order", "-d /log -k -n -u -r /drv -l /c --no-create-imex-channels --proc-root=/p --dev-root /d info --csv", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, nvcli.Global{Debug: "/log", LoadKmods: true, NoPivot: true, UserGiven: true, Root: "/drv", LDCache: "/c",
				NoCreateIMEXChannels: true, ProcRoot: "/p", DevRoot: "/d"}, c.Global)
			assert.Equal(t, nvcli.CommandInfo, c.Name)
			assert.True(t, c.Info.CSV)
		}},
		{"attached optional -u", "-u65534:65534 list -d0", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, "65534:65534", c.Global.User)
			assert.Equal(t, "65534:65534", c.Global.NVMLHelperUser())
			assert.Equal(t, []string{"0"}, c.List.Devices)
		}},
		{"--user without = takes no value", "--user list", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, nvcli.CommandList, c.Name)
			assert.Empty(t, c.Global.User)
			assert.Equal(t, fmt.Sprintf("%d:%d", os.Geteuid(), os.Getegid()), c.Global.NVMLHelperUser(), "the caller's ids")
		}},
		{"no --user: the helper's default", "list", func(t *testing.T, c *nvcli.Command) {
			assert.Empty(t, c.Global.NVMLHelperUser())
		}},
		{"short cluster and prefix", "list -ld0 --dev=1 --lib", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, []string{"0", "1"}, c.List.Devices)
			assert.True(t, c.List.Libraries)
			assert.False(t, c.List.Binaries)
		}},
		{"bare list", "list", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, *nvcli.DefaultListOptions(), c.List)
		}},
		{"list --imex-channel=X is a bare list", "list --imex-channel=3", func(t *testing.T, c *nvcli.Command) {
			want := nvcli.DefaultListOptions()
			want.IMEXChannels = []uint32{3}
			assert.Equal(t, *want, c.List)
		}},
		{"list --imex-channel X is not", "list --imex-channel 3", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, nvcli.ListOptions{IMEXChannels: []uint32{3}}, c.List)
		}},
		{"--no-gsp-firmware turns -f off", "list -f -b --no-gsp-firmware --no-persistenced", func(t *testing.T, c *nvcli.Command) {
			assert.False(t, c.List.Firmware)
			assert.True(t, c.Driver.NoGSPFirmware)
			assert.True(t, c.Driver.NoPersistenced)
		}},
		{"configure, options after ROOTFS", "configure /rootfs -p 42 -cu -d 0 --device=1 -r cuda>=12 --compat32 -D --no-cgroups --dry-run -l /sbin/ldconfig -n", func(t *testing.T, c *nvcli.Command) {
			o := c.Configure
			assert.Equal(t, "/rootfs", o.Rootfs)
			assert.Equal(t, 42, o.PID)
			assert.Equal(t, "/sbin/ldconfig", o.LDConfig)
			assert.True(t, o.NoCgroups && o.DryRun && !o.NoDevbind)
			assert.Equal(t, []string{"0", "1"}, o.Flags.Devices)
			assert.Equal(t, []string{"cuda>=12"}, o.Flags.Requirements)
			assert.Equal(t, capabilities.Of(capabilities.Compute, capabilities.Utility, capabilities.Compat32, capabilities.Display, capabilities.NGX), o.Flags.Capabilities)
		}},
		{"-- before ROOTFS", "configure -- /rootfs", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, "/rootfs", c.Configure.Rootfs)
		}},
		{"--usage", "--usage", func(t *testing.T, c *nvcli.Command) {
			assert.Empty(t, c.Name)
			assert.True(t, strings.HasPrefix(c.Help, "Usage: nvidia-container-cli [-?knV] [-d FILE] [-l FILE] [-r PATH]\n            [-u[UID[:GID]]] [--help]"), c.Help)
		}},
		{"info --usage", "info --usage", func(t *testing.T, c *nvcli.Command) {
			assert.Equal(t, "Usage: nvidia-container-cli info [-?V] [--help] [--csv] [--usage] [--version]\n", c.Help)
		}},
		{"list -V", "list -V", func(t *testing.T, c *nvcli.Command) {
			assert.True(t, c.Version)
			assert.Empty(t, c.Name)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := nvcli.Parse(append([]string{"nvidia-container-cli"}, strings.Fields(tc.args)...), nil)
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

// TestParseHelp: --help in argp's layout; info's is byte for byte what
// glibc's argp prints for nvidia-container-cli info's table (less the
// bug address line).
func TestParseHelp(t *testing.T) {
	c, err := nvcli.Parse([]string{"nvidia-container-cli", "info", "-?"}, nil)
	require.NoError(t, err)
	assert.Equal(t, `Usage: nvidia-container-cli info [OPTION...]
Query the driver and report its information as well as the devices it
detected.

 Options:
  -?, --help                 Give this help list
      --csv                  Output in CSV format
      --usage                Give a short usage message
  -V, --version              Print program version
`, c.Help)
	var sim string
	c, err = nvcli.Parse([]string{"nvidia-container-cli", "--simulate=dgx", "--help"}, &nvcli.ParseOptions{
		Global: []nvcli.Option{{Name: "simulate", Arg: "MACHINE", Doc: "Simulate", Set: func(v string) error { sim = v; return nil }}}})
	require.NoError(t, err)
	assert.Equal(t, "dgx", sim)
	for _, want := range []string{"\n Commands:\n  configure                  Configure a container with GPU support\n",
		"\n Options:\n  -?, --help                 Give this help list\n",
		"\n  -d, --debug=FILE           Log debug information\n",
		"      --no-create-imex-channels   Don't automatically create IMEX channel\n                             device nodes\n",
		"      --simulate=MACHINE     Simulate\n",
		"  -u, --user[=UID[:GID]]     User and group to use for privilege separation\n",
		"\nMandatory or optional arguments to long options are also mandatory or optional\nfor any corresponding short options.\n"} {
		assert.Contains(t, c.Help, want)
	}
	c, err = nvcli.Parse([]string{"nvidia-container-cli", "configure", "--help"}, &nvcli.ParseOptions{ConfigureDoc: "Our note."})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(c.Help, "for any corresponding short options.\n\nOur note.\n"), c.Help)
	assert.Contains(t, c.Help, "  -c, --compute              Enable compute capability\n      --dry-run")
}

// TestParseValueErrors: values an option refuses are input errors under
// the program's name.
func TestParseValueErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"configure --pid=x /r", `nvidia-container-cli: input error: invalid pid "x"` + "\n"},
		{"list --imex-channel=x", `nvidia-container-cli: error parsing IMEX info: parsing IMEX channel list "x": channel "x": not a decimal number below 1048576: invalid device` + "\n"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			_, err := nvcli.Parse(append([]string{"nvidia-container-cli"}, strings.Fields(tc.args)...), nil)
			var stderr bytes.Buffer
			assert.Equal(t, 1, nvcli.Report(&stderr, "nvidia-container-cli", err))
			assert.Equal(t, tc.want, stderr.String())
		})
	}
}
