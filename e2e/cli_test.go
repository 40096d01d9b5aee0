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
			if code != 0 || !strings.Contains(stderr, `SIMULATED host "dgxa100"`) {
				t.Fatalf("exit %d, stderr %q; want 0 and the simulation named", code, stderr)
			}
			golden(t, filepath.Join("testdata", tc.name+".golden"), out)
		})
	}
	t.Run("consistency", checkGoldenAgainstHost)
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\ngot:\n%s\nwant:\n%s", file, got, want)
	}
}

// infoLine is one line of the text info layout: a label padded to 15
// columns, a space, a value.
var infoLine = regexp.MustCompile(`^([A-Za-z ]+:) {1,14}(\S.*)$`)

func checkGoldenAgainstHost(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fh := simHost(t, &fakehost.Options{Machine: "dgxa100", RealNodes: false})
	var uuids []string
	for _, line := range strings.Split(read("info"), "\n") {
		if line == "" {
			continue
		}
		m := infoLine.FindStringSubmatch(line)
		if m == nil || len(m[1])+len(line)-len(m[1])-len(m[2]) != 16 {
			t.Errorf("info line %q: want a label padded to 15 columns, a space, a value", line)
			continue
		}
		if m[1] == "GPU UUID:" {
			uuids = append(uuids, m[2])
		}
	}
	for i := range 8 {
		if i >= len(uuids) || uuids[i] != fakenvml.GPUUUID("dgxa100", i) {
			t.Errorf("info GPU %d UUID = %v, want the mock's %s", i, uuids, fakenvml.GPUUUID("dgxa100", i))
		}
	}
	if !strings.HasPrefix(read("info"), "NVRM version:   "+fh.DriverVersion+"\nCUDA version:   "+fh.CUDAVersion+"\n") {
		t.Errorf("info does not start with the driver %s and CUDA %s versions", fh.DriverVersion, fh.CUDAVersion)
	}
	rows := strings.Split(strings.TrimSpace(read("info-csv")), "\n")
	if len(rows) != 12 || rows[3] != "Device Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture" ||
		!strings.HasPrefix(rows[4], "0,0,") || !strings.Contains(rows[4], ","+uuids[0]+",") {
		t.Errorf("info --csv layout: %q", rows)
	}
	for _, name := range []string{"list", "list-imex", "list-device-libraries", "list-mixed"} {
		for _, p := range strings.Split(strings.TrimSpace(read(name)), "\n") {
			if _, err := os.Lstat(filepath.Join(fh.Root, p)); err != nil && !strings.Contains(p, "imex-channels/channel") {
				t.Errorf("%s lists %s, which the simulated host lacks", name, p)
			}
		}
	}
}

// TestCLISimulateUnprivileged runs the README's commands as an
// unprivileged user: the same output as root.
func TestCLISimulateUnprivileged(t *testing.T) {
	testutil.RequireRoot(t) // to switch to uid 65534
	bin := buildExample(t, "nvidia-container-cli", false)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenCases[:3] {
		cmd := execAs(bin, 65534, append([]string{"--simulate=dgxa100"}, tc.args...)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v as uid 65534: %v\n%s", tc.args, err, stderr.String())
		}
		golden(t, filepath.Join("testdata", tc.name+".golden"), out.String())
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
	if want := "/dev/nvidiactl\n/dev/nvidia-uvm\n/dev/nvidia-uvm-tools\n/dev/nvidia-modeset\n/dev/nvidia0\n"; code != 0 || out != want {
		t.Errorf("-d FILE -u ... list -d 0: exit %d\n%s\nwant the control nodes and /dev/nvidia0", code, out)
	}
	if b, _ := os.ReadFile(log); !strings.HasPrefix(string(b), "-- WARNING, the following logs are for debugging purposes only --\n") ||
		!strings.Contains(string(b), "host opened") {
		t.Errorf("global -d did not write the debug log:\n%s", b)
	}

	out, _, code = cli(t, append(append([]string{"-l", "/etc/ld.so.cache"}, hostFlags(fh)...), "list", "-l")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 10 || slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(l, ".so.") }) {
		t.Errorf("-l CACHE ... list -l: exit %d, want libraries only:\n%s", code, out)
	}

	args := append([]string{"-n", "-r", fh.Root, "--proc-root=" + fh.ProcRoot, "--dev-root=" + fh.DevRoot},
		"configure", rootfs, "--dry-run", "-n", "-c", "-u", "-v", "-g", "-D", "--compat32", "-d", "1", "-r", "driver>=500", "-l", "/sbin/ldconfig", "-p", strconv.Itoa(os.Getpid()))
	out, stderr, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("configure with every short flag: exit %d\n%s", code, stderr)
	}
	var plan nvcontainer.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Capabilities.String() != "compat32,compute,display,graphics,ngx,utility,video" || plan.Driver.Root != fh.Root ||
		len(plan.GPUs) != 1 || plan.GPUs[0].Index != 1 || !slices.Equal(plan.Requirements, []string{"driver>=500"}) ||
		plan.Container != (nvcontainer.Container{PID: os.Getpid(), Rootfs: rootfs}) {
		t.Errorf("plan: caps %s, root %s, gpus %+v, requirements %q, container %+v", plan.Capabilities, plan.Driver.Root, plan.GPUs, plan.Requirements, plan.Container)
	}

	// Global options end at the command.
	if _, stderr, code := cli(t, append(hostFlags(fh)[1:], "list", "--root=/x")...); code != 1 || !strings.Contains(stderr, "unknown flag: --root") {
		t.Errorf("a global option after the command: exit %d, %q; want 1 and unknown flag", code, stderr)
	}
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
		{"unknown machine", []string{"--simulate=dgx1", "info"}, `input error: unknown --simulate machine "dgx1" (want one of dgxa100, dgxb200, dgxh100, dgxh200)`},
		{"simulate and root", []string{"--simulate=dgxa100", "--root=/", "info"}, "input error: --simulate cannot be combined with --root, --proc-root or --dev-root"},
		{"no command", hf, "missing command (info, list or configure)"},
		{"unknown command", cat(hf, "setup"), `unknown command "setup" (want info, list or configure)`},
		{"no rootfs", cat(hf, "configure"), "configure takes 1 argument(s), got 0: []"},
		{"two rootfs", cat(hf, "configure", rootfs, rootfs), "configure takes 1 argument(s), got 2"},
		{"unknown flag", cat(hf, "info", "--json"), "unknown flag: --json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cli(t, tc.args...)
			first := firstErrorLine(stderr)
			if code != 1 || !strings.HasPrefix(first, "nvidia-container-cli: "+tc.line) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and a line starting %q", code, stderr, "nvidia-container-cli: "+tc.line)
			}
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
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	rootfs := debianRootfsDir(t)
	for _, dir := range []string{filepath.Dir(rootfs), rootfs} {
		os.Chmod(dir, 0o755)
	}
	for _, tc := range []struct {
		dryRun bool
		code   int
		line   string
	}{{false, 1, "nvidia-container-cli: permission error: configure needs root"}, {true, 0, ""}} {
		args := []string{"--simulate=dgxh100", "configure", "--pid=" + strconv.Itoa(sleeper.Process.Pid), "-d", "all", rootfs}
		if tc.dryRun {
			args = append(args, "--dry-run")
		}
		cmd := execAs(bin, 65534, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.HasPrefix(firstErrorLine(stderr.String()), tc.line) {
			t.Errorf("%v as uid 65534: exit %d, %s; want %d %q", args, cmd.ProcessState.ExitCode(), stderr.String(), tc.code, tc.line)
		}
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
	if code != 0 || !strings.Contains(out, "  -d, --debug=FILE ") || !strings.Contains(out, "  -u, --user[=UID[:GID]] ") || !strings.Contains(out, "--simulate=MACHINE") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
	out, _, code = cli(t, "configure", "-?")
	if code != 0 || !strings.Contains(out, "The container's ld.so.cache is written in Go: no ldconfig is run") || !strings.Contains(out, "  -D, --display ") {
		t.Errorf("configure -?: exit %d\n%s", code, out)
	}
	out, _, code = cli(t, "-V")
	keys := []string{"cli-version", "lib-version", "build date", "build revision", "build compiler", "build platform", "build flags"}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != len(keys) {
		t.Fatalf("-V: exit %d\n%s", code, out)
	}
	for i, k := range keys {
		if !strings.HasPrefix(lines[i], k+": ") {
			t.Errorf("-V line %d = %q, want %q first", i+1, lines[i], k+":")
		}
	}
	fh := simHost(t, nil)
	if out, stderr, code := cli(t, append([]string{"-u65534:65534"}, append(hostFlags(fh), "list", "-d0")...)...); code != 0 || !strings.HasSuffix(out, "/dev/nvidia0\n") {
		t.Errorf("-uUID:GID ... list -d0: exit %d, %q %s", code, out, stderr)
	}
}
