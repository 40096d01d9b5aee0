//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// Fixtures of the user-namespace tests: an unprivileged user made for the
// test (with subordinate ids, for rootless podman), trees made reachable
// for it, and a check that everything created in a rootfs has the
// container's mapped root as owner.

// accountFiles are the files useradd and userdel change; a rootless test
// leaves them as it found them.
var accountFiles = []string{"/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow", "/etc/subuid", "/etc/subgid"}

// rootlessUser is an unprivileged user created for one test.
type rootlessUser struct {
	name       string
	uid, gid   int
	home       string
	subStart   int // its first subordinate uid and gid
	runtimeDir string
}

// newRootlessUser creates a user with a home and 65536 subordinate uids
// and gids (useradd adds them from login.defs; if it did not, they are
// added here), and deletes it again when the test ends, after ending its
// processes (podman's pause process): the account files are then as
// before, which the cleanup checks.
func newRootlessUser(t *testing.T) *rootlessUser {
	t.Helper()
	testutil.RequireRoot(t)
	for _, c := range []string{"useradd", "userdel", "newuidmap", "newgidmap"} {
		testutil.RequireCommand(t, c)
	}
	before := readFiles(t, accountFiles)
	home, err := os.MkdirTemp("", "nvc-home-")
	require.NoError(t, err)
	u := &rootlessUser{name: "nvc" + randomHex(), home: home}
	out, err := exec.Command("useradd", "--no-create-home", "--home-dir", home, "--shell", "/bin/sh", "--user-group", u.name).CombinedOutput()
	require.NoError(t, err, "useradd: %s", out)
	t.Cleanup(func() { u.remove(t, before) })
	lookupIDs(t, u)
	u.subStart = ensureSubIDs(t, u.name)
	u.runtimeDir = filepath.Join(home, "run")
	require.NoError(t, os.Mkdir(u.runtimeDir, 0o700))
	require.NoError(t, chownTree(home, u.uid, u.gid))
	return u
}

func lookupIDs(t *testing.T, u *rootlessUser) {
	t.Helper()
	for _, f := range []struct {
		flag string
		id   *int
	}{{"-u", &u.uid}, {"-g", &u.gid}} {
		out, err := exec.Command("id", f.flag, u.name).Output()
		require.NoError(t, err, "id %s %s", f.flag, u.name)
		*f.id, err = strconv.Atoi(strings.TrimSpace(string(out)))
		require.NoError(t, err)
	}
}

// ensureSubIDs returns the start of name's range in /etc/subuid, which
// must equal its range in /etc/subgid, adding both when absent.
func ensureSubIDs(t *testing.T, name string) int {
	t.Helper()
	starts := make([]int, 2)
	for i, f := range []string{"/etc/subuid", "/etc/subgid"} {
		starts[i] = subIDStart(t, f, name)
		if starts[i] < 0 {
			starts[i] = freeSubIDStart(t, f)
			appendLine(t, f, fmt.Sprintf("%s:%d:65536", name, starts[i]))
		}
	}
	require.Equal(t, starts[0], starts[1], "subordinate uid and gid ranges of %s differ", name)
	return starts[0]
}

func subIDStart(t *testing.T, file, name string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 3 && f[0] == name {
			n, err := strconv.Atoi(f[1])
			require.NoError(t, err, "%s: %q", file, line)
			return n
		}
	}
	return -1
}

// freeSubIDStart is a range start above every range in file.
func freeSubIDStart(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	start := 200000
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) == 3 {
			a, _ := strconv.Atoi(f[1])
			n, _ := strconv.Atoi(f[2])
			start = max(start, a+n)
		}
	}
	return start
}

func appendLine(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	require.NoError(t, err)
}

// remove ends the user's processes (by pid), deletes the user, its
// subordinate ids and its home, and checks the account files are back.
func (u *rootlessUser) remove(t *testing.T, before map[string]string) {
	u.killProcesses(t)
	out, err := exec.Command("userdel", u.name).CombinedOutput()
	assert.NoError(t, err, "userdel %s: %s", u.name, out)
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		removeLine(t, f, u.name+":")
	}
	assert.NoError(t, os.RemoveAll(u.home), "removing %s's home", u.name)
	after := readFiles(t, accountFiles)
	for _, f := range accountFiles {
		assert.Equal(t, before[f], after[f], "%s after deleting the test's user %s", f, u.name)
	}
}

// killProcesses kills every process whose real uid is the user's, by pid,
// until none is left (podman leaves a pause process behind).
func (u *rootlessUser) killProcesses(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := u.processes()
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			assert.Empty(t, pids, "processes of %s still running", u.name)
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (u *rootlessUser) processes() []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.Itoa(u.uid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func removeLine(t *testing.T, file, prefix string) {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var keep []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(line, prefix) {
			keep = append(keep, line)
		}
	}
	if s := strings.Join(keep, ""); s != string(data) {
		require.NoError(t, os.WriteFile(file, []byte(s), 0o644))
	}
}

func readFiles(t *testing.T, files []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		m[f] = string(data)
	}
	return m
}

// command is name run as the user, with a login-like environment.
func (u *rootlessUser) command(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir = u.home
	c.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + u.home,
		"USER=" + u.name, "LOGNAME=" + u.name, "XDG_RUNTIME_DIR=" + u.runtimeDir}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid), Groups: []uint32{}}}
	return c
}

// reachable makes the directories from each path up to the temp dir
// searchable by others (t.TempDir makes them 0700), so that the user's
// processes can reach fixtures the test made as root.
func reachable(t *testing.T, paths ...string) {
	t.Helper()
	top := filepath.Clean(os.TempDir())
	for _, p := range paths {
		for d := filepath.Clean(p); strings.HasPrefix(d, top+"/"); d = filepath.Dir(d) {
			fi, err := os.Stat(d)
			require.NoError(t, err)
			if fi.IsDir() {
				require.NoError(t, os.Chmod(d, fi.Mode().Perm()|0o055))
			}
		}
	}
}

// chownTree gives everything below root (root included) to uid:gid,
// links themselves.
func chownTree(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// checkCreatedOwner checks that each entry the container's start added
// to the rootfs (before and after are snapshots: see
// container.SnapshotTree) is owned by uid:gid, the container's root as
// the host sees it.
func checkCreatedOwner(t *testing.T, before, after map[string]string, uid, gid int) {
	t.Helper()
	want := fmt.Sprintf(" uid=%d gid=%d ", uid, gid)
	var added, wrong []string
	for p, desc := range after {
		if _, ok := before[p]; ok {
			continue
		}
		added = append(added, p)
		if !strings.Contains(desc, want) {
			wrong = append(wrong, p+": "+desc)
		}
	}
	assert.NotEmpty(t, added, "nothing was created in the rootfs")
	assert.Empty(t, wrong, "entries created in the rootfs not owned by %d:%d (of %d added)", uid, gid, len(added))
}

// output runs c and returns stdout and stderr.
func output(c *exec.Cmd) (string, string, error) {
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	return stdout.String(), stderr.String(), err
}

// podman runs `podman run --rm` as the user (rootless: podman makes its
// user namespace with newuidmap and newgidmap from the user's
// subordinate ids) with storage of its own below the user's home, as
// the root podman helper does; global are podman's options, opts run
// options. It runs in a
// private mount namespace whose /dev holds the simulated host's nodes
// (simulatedDev), as a rootless runtime binds each device from its own
// path on the host.
func (u *rootlessUser) podman(t *testing.T, runtime string, env podmanEnv, global, opts []string, rootfs string, cmd ...string) (string, string, error) {
	t.Helper()
	bin := testutil.RequireCommand(t, "podman")
	store, err := os.MkdirTemp(u.home, "pm-")
	require.NoError(t, err)
	require.NoError(t, os.Chown(store, u.uid, u.gid))
	args := append([]string{
		"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"),
		"--tmpdir", filepath.Join(store, "tmp"), "--storage-driver", "vfs",
		"--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", runtime,
	}, global...)
	args = append(append(append(append(args, "run", "--rm", "--network", "none"), opts...), "--rootfs", rootfs), cmd...)
	return output(u.inSimulatedDev(t, env, bin, args...))
}

// podmanEnv is where rootless podman runs: the simulated host's dev root,
// whose nodes its /dev gets, and a devices cgroup (v1) to run in, or "".
type podmanEnv struct {
	devRoot, cgroup string
}

// simulatedDev mounts an overlay on /dev (the host's /dev below, a tmpfs
// above: the host's /dev is not changed), keeps /dev/shm and /dev/pts,
// copies the simulated host's nodes in, moves into the cgroup when one is
// given and runs the rest as the user.
const simulatedDev = `set -e
w=$1 dev=$2 ids=$3 cg=$4; shift 4
mount -t tmpfs -o mode=0700 nvc-dev "$w"
mkdir "$w/upper" "$w/work" "$w/shm" "$w/pts"
mount --bind /dev/shm "$w/shm"
mount --bind /dev/pts "$w/pts"
mount -t overlay -o "lowerdir=/dev,upperdir=$w/upper,workdir=$w/work" nvc-dev /dev
mount --move "$w/shm" /dev/shm
mount --move "$w/pts" /dev/pts
cp -a "$dev"/. /dev/
if [ -n "$cg" ]; then echo $$ > "$cg/cgroup.procs"; fi
exec setpriv --reuid="${ids%:*}" --regid="${ids#*:}" --clear-groups "$@"`

// inSimulatedDev is name run as the user in a private mount namespace
// with the simulated host's nodes in /dev (see simulatedDev).
func (u *rootlessUser) inSimulatedDev(t *testing.T, env podmanEnv, name string, args ...string) *exec.Cmd {
	t.Helper()
	unshare := testutil.RequireCommand(t, "unshare")
	testutil.RequireCommand(t, "setpriv")
	work := t.TempDir()
	c := u.command(unshare, append([]string{"--mount", "--propagation", "private", "/bin/sh", "-c", simulatedDev, "simulated-dev",
		work, env.devRoot, fmt.Sprintf("%d:%d", u.uid, u.gid), env.cgroup, name}, args...)...)
	c.SysProcAttr = nil // root until setpriv
	return c
}

// v1Devices is the cgroup v1 devices hierarchy.
const v1Devices = "/sys/fs/cgroup/devices"

// devicePolicyCgroup makes a cgroup v1 devices cgroup whose policy, set
// here as root, is what a rootless runtime's containers get: the basic
// nodes (1:*, 5:*, 136:*) and every NVIDIA GPU and control node (195:*),
// nothing else (not nvidia-uvm). It returns "" on a host without the v1
// devices hierarchy (cgroup v2 only). The cgroup is removed when the test
// ends, after the user's processes.
func devicePolicyCgroup(t *testing.T, u *rootlessUser) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(v1Devices, "devices.allow")); err != nil {
		return ""
	}
	dir := filepath.Join(v1Devices, "nvc-e2e-rootless-"+randomHex())
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		u.killProcesses(t)
		assert.NoError(t, os.Remove(dir), "removing the cgroup %s", dir)
	})
	for _, r := range []struct{ file, rule string }{
		{"devices.deny", "a"}, {"devices.allow", "c 1:* rwm"}, {"devices.allow", "c 5:* rwm"},
		{"devices.allow", "c 136:* rwm"}, {"devices.allow", "c 195:* rw"},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, r.file), []byte(r.rule), 0), "%s %q in %s", r.file, r.rule, dir)
	}
	return dir
}
