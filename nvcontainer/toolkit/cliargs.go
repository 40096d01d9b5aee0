package toolkit

import (
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// DefaultCLIPath is argv[0] of [CLIArgs] when the config names no
// nvidia-container-cli binary (the hook would look it up in PATH).
const DefaultCLIPath = "nvidia-container-cli"

// CLIArgs returns the nvidia-container-cli command line (argv[0] first)
// that nvidia-container-runtime-hook would execute for r in ctr, with the
// global options of cfg (nil: [DefaultConfig]). It returns nil when r is not
// a GPU container: the hook executes nothing then.
//
// The order is the hook's, and stable:
//
//	nvidia-container-cli [--root=R] [--load-kmods] [--no-create-imex-channels]
//	    [--no-pivot] [--debug=F] [--ldcache=F] [--user=U] configure
//	    [--cuda-compat-mode=M] [--ldconfig=L] [--no-cgroups] [--device=LIST]
//	    [--mig-config=X] [--mig-monitor=X] [--imex-channel=LIST]
//	    [--compat32] [--compute] [--display] [--graphics] [--ngx] [--utility] [--video]
//	    [--require=EXPR]... --pid=PID ROOTFS
//
// The capability flags come in canonical order and the requirements in
// Request order (sorted by variable, where the hook's order is random). The
// ldconfig path is used as configured: normalize it first with
// [NormalizeLDConfigPath] to match a host with /sbin/ldconfig.real. The
// hook's own -debug flag corresponds to cfg.CLI.Debug = "/dev/stderr".
func CLIArgs(r *request.Request, cfg *Config, ctr nvcontainer.Container) []string {
	if !r.IsGPU() {
		return nil
	}
	if cfg == nil {
		cfg = DefaultConfig()
	}
	args := append(globalArgs(cfg), "configure")
	args = append(args, configureArgs(r, cfg)...)
	return append(args, "--pid="+strconv.Itoa(ctr.PID), ctr.Rootfs)
}

func globalArgs(cfg *Config) []string {
	c := cfg.CLI
	prog := c.Path
	if prog == "" {
		prog = DefaultCLIPath
	}
	args := []string{prog}
	args = appendValue(args, "--root=", c.Root)
	args = appendFlag(args, "--load-kmods", !c.NoLoadKmods)
	args = appendFlag(args, "--no-create-imex-channels", cfg.Features.DisableIMEXChannelCreation)
	args = appendFlag(args, "--no-pivot", c.NoPivot)
	args = appendValue(args, "--debug=", c.Debug)
	args = appendValue(args, "--ldcache=", c.Ldcache)
	return appendValue(args, "--user=", c.User)
}

func configureArgs(r *request.Request, cfg *Config) []string {
	var args []string
	args = appendValue(args, "--cuda-compat-mode=", string(r.CUDACompatMode))
	args = appendValue(args, "--ldconfig=", cfg.CLI.Ldconfig)
	args = appendFlag(args, "--no-cgroups", cfg.CLI.NoCgroups)
	if r.Devices.Mode == request.DevicesAll || r.Devices.Mode == request.DevicesList {
		args = append(args, "--device="+r.Devices.String())
	}
	args = appendValue(args, "--mig-config=", r.MIGConfig)
	args = appendValue(args, "--mig-monitor=", r.MIGMonitor)
	args = appendValue(args, "--imex-channel=", joinChannels(r.IMEXChannels))
	args = append(args, CapabilityFlags(r.Capabilities)...)
	if !r.DisableRequire {
		for _, req := range r.Requirements {
			args = append(args, "--require="+req)
		}
	}
	return args
}

// CapabilityFlags returns the configure flags for s, in canonical order:
// "--compute", "--utility", ...
func CapabilityFlags(s capabilities.Set) []string {
	var flags []string
	for _, c := range s.List() {
		flags = append(flags, "--"+c.String())
	}
	return flags
}

func appendFlag(args []string, flag string, on bool) []string {
	if on {
		return append(args, flag)
	}
	return args
}

func appendValue(args []string, prefix, value string) []string {
	if value != "" {
		return append(args, prefix+value)
	}
	return args
}

func joinChannels(chans []uint32) string {
	parts := make([]string, len(chans))
	for i, c := range chans {
		parts[i] = strconv.FormatUint(uint64(c), 10)
	}
	return strings.Join(parts, ",")
}

// NormalizeLDConfigPath returns the ldconfig the hook passes for a
// configured one: a host path ("@/sbin/ldconfig" or "@/sbin/ldconfig.real")
// becomes "@/sbin/ldconfig.real" when exists reports that file, else
// "@/sbin/ldconfig"; a container path is returned as is. exists is asked
// about host paths only (the hook uses os.Stat).
func NormalizeLDConfigPath(p string, exists func(hostPath string) bool) string {
	host, ok := strings.CutPrefix(p, "@")
	if !ok {
		return p
	}
	host = strings.TrimSuffix(host, ".real")
	if exists != nil && exists(host+".real") {
		return "@" + host + ".real"
	}
	return "@" + host
}

// FormatCommand joins args into one line a POSIX shell would split back
// into args, quoting only where needed.
func FormatCommand(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+/.,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
