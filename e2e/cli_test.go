//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
)

// cli runs our nvidia-container-cli with args; env is PATH only.
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, []string{"PATH=" + os.Getenv("PATH")}, "", buildExample(t, "nvidia-container-cli", false), args...)
}

// goldenCases are the outputs kept in testdata/<name>.golden, all on the
// simulated DGX A100 of --simulate.
var goldenCases = []struct {
	name string
	args []string
}{
	{"info", []string{"info"}},
	{"info-csv", []string{"info", "--csv"}},
	{"list", []string{"list"}},
	{"list-imex", []string{"list", "--imex-channel=0"}},
	{"list-device-libraries", []string{"list", "-d", "1", "-l"}},
	{"list-mixed", []string{"list", "--device=0,GPU-" + strings.TrimPrefix(fakenvml.GPUUUID("dgxa100", 3), "GPU-"), "-b", "-i", "-f",
		"--no-persistenced", "--no-gsp-firmware", "--compat32", "--imex-channel", "2,5"}},
}

// TestCLIGolden compares info and list on --simulate=dgxa100 byte for
// byte with testdata (rewrite with -update), checks that stderr says the
// host is simulated, and checks the outputs against the simulated host:
// info's values against the NVML mock, every listed path against a host
// generated here.
func TestCLIGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := cli(t, append([]string{"--simulate=dgxa100"}, tc.args...)...)
			require.Equal(t, 0, code, "exit %d, stderr %q; want 0 and the simulation named", code, stderr)
			require.Contains(t, stderr, `SIMULATED host "dgxa100"`, "want the simulation named")
			golden(t, filepath.Join("testdata", tc.name+".golden"), out)
		})
	}
	t.Run("consistency", checkGoldenAgainstHost)
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), got, "output differs from %s (run with -update to accept)", file)
}

// infoLine is one line of the text info layout: a label padded to 15
// columns, a space, a value.
var infoLine = regexp.MustCompile(`^([A-Za-z ]+:) {1,14}(\S.*)$`)

func checkGoldenAgainstHost(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
		require.NoError(t, err)
		return string(b)
	}
	fh := simHost(t, &fakehost.Options{Machine: "dgxa100", RealNodes: false})
	var uuids []string
	for _, line := range strings.Split(read("info"), "\n") {
		if line == "" {
			continue
		}
		m := infoLine.FindStringSubmatch(line)
		if !assert.True(t, m != nil && len(m[1])+len(line)-len(m[1])-len(m[2]) == 16, "info line %q: want a label padded to 15 columns, a space, a value", line) {
			continue
		}
		if m[1] == "GPU UUID:" {
			uuids = append(uuids, m[2])
		}
	}
	for i := range 8 {
		if assert.Less(t, i, len(uuids), "info GPU %d UUID = %v, want the mock's %s", i, uuids, fakenvml.GPUUUID("dgxa100", i)) {
			assert.Equal(t, fakenvml.GPUUUID("dgxa100", i), uuids[i], "info GPU %d UUID, want the mock's", i)
		}
	}
	assert.True(t, strings.HasPrefix(read("info"), "NVRM version:   "+fh.DriverVersion+"\nCUDA version:   "+fh.CUDAVersion+"\n"),
		"info does not start with the driver %s and CUDA %s versions", fh.DriverVersion, fh.CUDAVersion)
	rows := strings.Split(strings.TrimSpace(read("info-csv")), "\n")
	if assert.Len(t, rows, 12, "info --csv layout: %q", rows) {
		assert.Equal(t, "Device Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture", rows[3], "info --csv layout: %q", rows)
		assert.True(t, strings.HasPrefix(rows[4], "0,0,"), "info --csv layout: %q", rows)
		assert.Contains(t, rows[4], ","+uuids[0]+",", "info --csv layout: %q", rows)
	}
	for _, name := range []string{"list", "list-imex", "list-device-libraries", "list-mixed"} {
		for _, p := range strings.Split(strings.TrimSpace(read(name)), "\n") {
			if strings.Contains(p, "imex-channels/channel") {
				continue
			}
			_, err := os.Lstat(filepath.Join(fh.Root, p))
			assert.NoError(t, err, "%s lists %s, which the simulated host lacks", name, p)
		}
	}
}

// TestCLISimulateUnprivileged runs the README's commands as an
// unprivileged user: the same output as root.
func TestCLISimulateUnprivileged(t *testing.T) {
	testutil.RequireRoot(t) // to switch to uid 65534
	bin := buildExample(t, "nvidia-container-cli", false)
	require.NoError(t, os.Chmod(filepath.Dir(bin), 0o755))
	for _, tc := range goldenCases[:3] {
		t.Run(tc.name, func(t *testing.T) {
			cmd := execAs(bin, 65534, append([]string{"--simulate=dgxa100"}, tc.args...)...)
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			require.NoError(t, cmd.Run(), "%v as uid 65534: %s", tc.args, stderr.String())
			golden(t, filepath.Join("testdata", tc.name+".golden"), out.String())
		})
	}
}

// TestCLIShortOptions checks the short letters that mean one thing before
// the command and another after it (-d, -l, -r, -u, -n), argp's
// ARGP_IN_ORDER, and options after ROOTFS.
func TestCLIShortOptions(t *testing.T) {
	fh := simHost(t, nil)
	rootfs := debianRootfsDir(t)
	log := filepath.Join(t.TempDir(), "debug.log")

	out, _, code := cli(t, append([]string{"-d", log, "-u"}, append(hostFlags(fh), "list", "-d", "0")...)...)
	assert.Equal(t, 0, code, "-d FILE -u ... list -d 0: exit %d\n%s", code, out)
	assert.Equal(t, "/dev/nvidiactl\n/dev/nvidia-uvm\n/dev/nvidia-uvm-tools\n/dev/nvidia-modeset\n/dev/nvidia0\n", out,
		"-d FILE -u ... list -d 0: want the control nodes and /dev/nvidia0")
	b, _ := os.ReadFile(log)
	assert.True(t, strings.HasPrefix(string(b), "\n-- WARNING, the following logs are for debugging purposes only --\n\n"), "global -d did not write the debug log:\n%s", b)
	assert.Regexp(t, `(?m)^I\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ main\.go:\d+\] host opened root=`, string(b), "global -d: want libnvidia-container's line format")

	out, _, code = cli(t, append(append([]string{"-l", "/etc/ld.so.cache"}, hostFlags(fh)...), "list", "-l")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, 0, code, "-l CACHE ... list -l: exit %d\n%s", code, out)
	assert.GreaterOrEqual(t, len(lines), 10, "-l CACHE ... list -l: want libraries:\n%s", out)
	assert.False(t, slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(l, ".so.") }), "-l CACHE ... list -l: want libraries only:\n%s", out)

	args := append([]string{"-n", "-r", fh.Root, "--proc-root=" + fh.ProcRoot, "--dev-root=" + fh.DevRoot},
		"configure", rootfs, "--dry-run", "-n", "-c", "-u", "-v", "-g", "-D", "--compat32", "-d", "1", "-r", "driver>=500", "-l", "/sbin/ldconfig", "-p", strconv.Itoa(os.Getpid()))
	out, stderr, code := cli(t, args...)
	require.Equal(t, 0, code, "configure with every short flag: exit %d\n%s", code, stderr)
	var plan nvcontainer.Plan
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	assert.Equal(t, "compat32,compute,display,graphics,ngx,utility,video", plan.Capabilities.String(), "plan: caps")
	assert.Equal(t, fh.Root, plan.Driver.Root, "plan: root")
	if assert.Len(t, plan.GPUs, 1, "plan: gpus") {
		assert.Equal(t, 1, plan.GPUs[0].Index, "plan: gpus %+v", plan.GPUs)
	}
	assert.True(t, slices.Equal(plan.Requirements, []string{"driver>=500"}), "plan: requirements %q", plan.Requirements)
	assert.Equal(t, nvcontainer.Container{PID: os.Getpid(), Rootfs: rootfs}, plan.Container, "plan: container")

	// Global options end at the command.
	_, stderr, code = cli(t, append(hostFlags(fh)[1:], "list", "--root=/x")...)
	assert.Equal(t, 1, code, "a global option after the command: exit %d, %q; want 1 and unknown flag", code, stderr)
	assert.Equal(t, "nvidia-container-cli list: unrecognized option '--root=/x'\n"+
		"Try `nvidia-container-cli list --help' or `nvidia-container-cli list --usage'\nfor more information.\n", stderr,
		"a global option after the command: want argp's usage error")
}

// TestCLIDebugLog: NVC_DEBUG_FILE names the debug log as --debug does
// (--debug wins), each run appends libnvidia-container's header, and an
// error is logged as an E line.
func TestCLIDebugLog(t *testing.T) {
	fh := simHost(t, nil)
	dir := t.TempDir()
	envLog, flagLog := filepath.Join(dir, "env.log"), filepath.Join(dir, "flag.log")
	bin := buildExample(t, "nvidia-container-cli", false)
	env := []string{"PATH=" + os.Getenv("PATH"), "NVC_DEBUG_FILE=" + envLog}
	_, stderr, code := run(t, env, "", bin, cat(hostFlags(fh), "list", "-d", "9")...)
	assert.Equal(t, 1, code, "list -d 9: exit status; stderr %s", stderr)
	_, stderr, code = run(t, env, "", bin, cat(hostFlags(fh), "info")...)
	assert.Equal(t, 0, code, "info: exit status; stderr %s", stderr)
	b, err := os.ReadFile(envLog)
	require.NoError(t, err, "NVC_DEBUG_FILE: no log")
	const header = "\n-- WARNING, the following logs are for debugging purposes only --\n\n"
	assert.Equal(t, 2, strings.Count(string(b), header), "NVC_DEBUG_FILE: want one header per run:\n%s", b)
	assert.Regexp(t, `(?m)^E\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ main\.go:\d+\] device error: 9: unknown device$`, string(b), "the error's E line")
	_, stderr, code = run(t, env, "", bin, cat([]string{"--debug=" + flagLog}, cat(hostFlags(fh), "info")...)...)
	assert.Equal(t, 0, code, "--debug info: exit status; stderr %s", stderr)
	after, _ := os.ReadFile(envLog)
	assert.Equal(t, string(b), string(after), "--debug given: NVC_DEBUG_FILE's log must not grow")
	flag, _ := os.ReadFile(flagLog)
	assert.True(t, strings.HasPrefix(string(flag), header), "--debug log:\n%s", flag)
}

// debianRootfsDir is a Debian-layout rootfs directory (no process).
func debianRootfsDir(t *testing.T) string {
	t.Helper()
	return testutil.Tree(t, "file etc/debian_version \"12.5\\n\"\ndir usr/lib/x86_64-linux-gnu\ndir usr/bin\n")
}

// TestCLIErrors checks nvidia-container-cli's error lines and exit status.
func TestCLIErrors(t *testing.T) {
	fh := simHost(t, nil)
	rootfs := debianRootfsDir(t)
	many := make([]string, 0, 2*33)
	for range 33 {
		many = append(many, "-r", "driver>=1")
	}
	sim := []string{"--simulate=dgxa100"}
	hf := hostFlags(fh)
	// The container: this process, whose root is the host's (rootfs is
	// a plain directory: standalone mode would refuse it, having no
	// procfs at rootfs/proc).
	pid := "--pid=" + strconv.Itoa(os.Getpid())
	// An image's stand-in for /proc/<ppid> (the CLI's parent is this
	// process).
	fakeProc := testutil.Tree(t, "file proc/"+strconv.Itoa(os.Getpid())+"/cgroup \"0::/\\n\"\n")
	tests := []struct {
		name string
		args []string
		line string // the whole first line of stderr that is not the simulation notice
	}{
		{"unknown device", cat(hf, "configure", pid, "--dry-run", "-d", "0,9", rootfs), "device error: 9: unknown device"},
		{"unmet cuda", cat(sim, "configure", pid, "--dry-run", "-d", "0", "--require=cuda>=99.0", rootfs),
			"requirement error: unsatisfied condition: cuda>=99.0, please update your driver to a newer version, or use an earlier cuda container"},
		{"unmet brand", cat(sim, "configure", pid, "--dry-run", "-d", "0", "--require=brand=geforce driver>=999", rootfs),
			"requirement error: unsatisfied condition: brand=geforce"},
		{"invalid requirement", cat(hf, "configure", pid, "--dry-run", "--require=driver>=500,foo>=1", rootfs),
			`requirement error: invalid expression: term "foo>=1" at offset 12 of requirement "driver>=500,foo>=1": unknown key "foo"`},
		{"relative rootfs", cat(hf, "configure", "rootfs"), "input error: invalid rootfs directory"},
		{"root rootfs", cat(hf, "configure", "/"), "input error: invalid rootfs directory"},
		{"standalone without procfs", cat(hf, "configure", "--dry-run", fakeProc),
			"input error: standalone mode (no --pid) reads " + fakeProc + "/proc, which is on a filesystem of type "},
		{"too many requirements", cat(hf, append(append([]string{"configure", pid}, many...), rootfs)...), "input error: too many requirements"},
		{"conflicting compat", cat(hf, "configure", pid, "--cuda-compat-mode=mount", "--cuda-compat-mode=ldconfig", rootfs),
			`input error: conflicting --cuda-compat-mode values "mount" and "ldconfig"`},
		{"imex", cat(hf, "configure", pid, "--imex-channel=x", rootfs),
			`error parsing IMEX info: parsing IMEX channel list "x": channel "x": not a decimal number below 1048576: invalid device`},
		{"mig-config", cat(hf, "list", "--mig-config=0"), "mig-config error: 0: only 'all' devices are currently supported"},
		{"mig-monitor", cat(hf, "list", "--mig-monitor=1", "--mig-monitor=all"), "mig-monitor error: 1: only 'all' devices are currently supported"},
		{"no driver", []string{"--root=" + fh.Root, "--proc-root=" + t.TempDir(), "info"}, "initialization error: "},
		{"unknown machine", []string{"--simulate=dgx1", "info"}, `input error: unknown --simulate machine "dgx1" (want one of dgxa100, dgxb200, dgxh100, dgxh200, jetson-orin, wsl)`},
		{"simulate and root", []string{"--simulate=dgxa100", "--root=/", "info"}, "input error: --simulate cannot be combined with --root, --proc-root or --dev-root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cli(t, tc.args...)
			first := firstErrorLine(stderr)
			assert.Equal(t, 1, code, "exit status; stderr:\n%s", stderr)
			assert.True(t, strings.HasPrefix(first, "nvidia-container-cli: "+tc.line), "stderr:\n%s\nwant a line starting %q", stderr, "nvidia-container-cli: "+tc.line)
		})
	}
}

// TestCLIUsageErrors checks argp's usage errors, whole (stderr is only
// them: they come before --simulate generates a host), and exit status 1.
func TestCLIUsageErrors(t *testing.T) {
	const usage = "Usage: nvidia-container-cli [OPTION...] COMMAND [ARG...]\n"
	const tryGlobal = "Try `nvidia-container-cli --help' or `nvidia-container-cli --usage' for more\ninformation.\n"
	const tryConfigure = "Try `nvidia-container-cli configure --help' or `nvidia-container-cli configure\n--usage' for more information.\n"
	sim := []string{"--simulate=dgxa100"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", sim, usage + tryGlobal},
		{"unknown command", cat(sim, "setup"), usage + tryGlobal},
		{"no rootfs", cat(sim, "configure"), "Usage: nvidia-container-cli configure [OPTION...] ROOTFS\n" + tryConfigure},
		{"two rootfs", cat(sim, "configure", "/a", "/b"), "Usage: nvidia-container-cli configure [OPTION...] ROOTFS\n" + tryConfigure},
		{"unknown option", cat(sim, "info", "--json"), "nvidia-container-cli info: unrecognized option '--json'\n" +
			"Try `nvidia-container-cli info --help' or `nvidia-container-cli info --usage'\nfor more information.\n"},
		{"too many arguments", cat(sim, "list", "all"), "nvidia-container-cli list: Too many arguments\n" +
			"Try `nvidia-container-cli list --help' or `nvidia-container-cli list --usage'\nfor more information.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := cli(t, tc.args...)
			assert.Equal(t, 1, code, "exit status; stderr:\n%s", stderr)
			assert.Empty(t, out)
			assert.Equal(t, tc.want, stderr)
		})
	}
}

func cat(a []string, b ...string) []string { return append(slices.Clone(a), b...) }

func firstErrorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.Contains(l, "SIMULATED") {
			return l
		}
	}
	return ""
}

// TestCLIPermission runs configure as an unprivileged user: a permission
// error, as nvidia-container-cli gives when it cannot set its
// capabilities; --dry-run still works. The container is a process of the
// same user, whose /proc/PID/root the plan reads the rootfs through.
func TestCLIPermission(t *testing.T) {
	testutil.RequireRoot(t) // to switch to uid 65534
	bin := buildExample(t, "nvidia-container-cli", false)
	sleeper := execAs(testutil.RequireCommand(t, "sleep"), 65534, "600")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	require.NoError(t, os.Chmod(filepath.Dir(bin), 0o755))
	rootfs := debianRootfsDir(t)
	for _, dir := range []string{filepath.Dir(rootfs), rootfs} {
		os.Chmod(dir, 0o755)
	}
	for _, tc := range []struct {
		name   string
		dryRun bool
		code   int
		line   string
	}{{"configure", false, 1, "nvidia-container-cli: permission error: configure needs root"}, {"dry-run", true, 0, ""}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--simulate=dgxh100", "configure", "--pid=" + strconv.Itoa(sleeper.Process.Pid), "-d", "all", rootfs}
			if tc.dryRun {
				args = append(args, "--dry-run")
			}
			cmd := execAs(bin, 65534, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			assert.Equal(t, tc.code, cmd.ProcessState.ExitCode(), "%v as uid 65534: exit status; stderr %s", args, stderr.String())
			assert.True(t, strings.HasPrefix(firstErrorLine(stderr.String()), tc.line), "%v as uid 65534: %s; want a line starting %q", args, stderr.String(), tc.line)
		})
	}
}

func execAs(bin string, uid uint32, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	return cmd
}

// TestCLIHelpVersion checks --help (exit 0, the options listed, the
// loader-cache note), --version's seven lines and argp's attached optional
// argument (-uUID:GID).
func TestCLIHelpVersion(t *testing.T) {
	out, _, code := cli(t, "--help")
	assert.Equal(t, 0, code, "--help: exit %d\n%s", code, out)
	for _, want := range []string{"  -d, --debug=FILE ", "  -u, --user[=UID[:GID]] ", "--simulate=MACHINE"} {
		assert.Contains(t, out, want, "--help")
	}
	out, _, code = cli(t, "configure", "-?")
	assert.Equal(t, 0, code, "configure -?: exit %d\n%s", code, out)
	for _, want := range []string{"The container's ld.so.cache is written in Go: no ldconfig is run", "  -D, --display "} {
		assert.Contains(t, out, want, "configure -?")
	}
	out, _, code = cli(t, "list", "--usage")
	assert.Equal(t, 0, code, "list --usage: exit %d\n%s", code, out)
	assert.True(t, strings.HasPrefix(out, "Usage: nvidia-container-cli list [-?bfilV] [-d ID] [--help] [--binaries]\n            [--compat32] "), "list --usage:\n%s", out)
	out, _, code = cli(t, "-V")
	keys := []string{"cli-version", "lib-version", "build date", "build revision", "build compiler", "build platform", "build flags"}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Equal(t, 0, code, "-V: exit %d\n%s", code, out)
	require.Len(t, lines, len(keys), "-V: exit %d\n%s", code, out)
	for i, k := range keys {
		assert.True(t, strings.HasPrefix(lines[i], k+": "), "-V line %d = %q, want %q first", i+1, lines[i], k+":")
	}
	fh := simHost(t, nil)
	out, stderr, code := cli(t, append([]string{"-u65534:65534"}, append(hostFlags(fh), "list", "-d0")...)...)
	assert.Equal(t, 0, code, "-uUID:GID ... list -d0: exit %d, %q %s", code, out, stderr)
	assert.True(t, strings.HasSuffix(out, "/dev/nvidia0\n"), "-uUID:GID ... list -d0: exit %d, %q %s", code, out, stderr)
}
