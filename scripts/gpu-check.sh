#!/bin/sh
# gpu-check.sh (make gpu-check): is nvc right on this GPU host?
#
# Without an NVIDIA GPU (no nvidia-smi, or nvidia-smi -L lists none) it
# prints "gpu-check: skipped: no NVIDIA GPU" and exits 0. On a GPU host,
# as root, it
#   info       compares `nvidia-container-cli info --csv` with `nvidia-smi -q`:
#              driver version, CUDA version, and each GPU's bus id, minor,
#              UUID and model;
#   container  runs `nvidia-container-cli configure --device=all --utility`
#              as the prestart hook of a busybox runc container whose
#              command is `nvidia-smi -L`, and checks it lists the host's
#              GPUs, once without NVML (the request needs none: procfs
#              discovery) and once with (--require=arch>=1.0 needs the
#              compute capability, which only NVML knows, so configure
#              starts it), timing configure each time.
# Any difference fails (exit 1).
#
# Environment: GPU_CHECK_STEPS (default "info container"), NVC_CLI (the
# nvidia-container-cli command, words split; default: built from
# ./examples/nvidia-container-cli), GPU_CHECK_RUNS (timed runs per
# variant, default 3).
set -eu

say() { echo "gpu-check: $*"; }
fail() { echo "gpu-check: FAIL: $*" >&2; exit 1; }

if ! command -v nvidia-smi >/dev/null 2>&1; then
	say "skipped: no NVIDIA GPU (nvidia-smi not found)"
	exit 0
fi
if ! gpus=$(nvidia-smi -L 2>/dev/null) || ! printf '%s\n' "$gpus" | grep -q '^GPU '; then
	say "skipped: no NVIDIA GPU (nvidia-smi -L lists none)"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/nvc-gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

if [ -z "${NVC_CLI:-}" ]; then
	# As it ships: without cgo, NVML through its helper nvc-nvml beside it.
	CGO_ENABLED=0 go build -o "$work/nvidia-container-cli" ./examples/nvidia-container-cli
	go build -o "$work/nvc-nvml" ./examples/nvc-nvml
	NVC_CLI="$work/nvidia-container-cli"
fi

# smi_facts prints nvidia-smi -q's facts, one per line, sorted:
# "driver V", "cuda V", "gpu BUS minor=M uuid=U model=NAME".
smi_facts() {
	awk '
	function val(s) { sub(/^[^:]*: */, "", s); sub(/[ \t\r]+$/, "", s); return s }
	function emit() { if (bus != "") printf "gpu %s minor=%s uuid=%s model=%s\n", bus, minor, uuid, model }
	/^Driver Version / { print "driver " val($0) }
	/^CUDA Version / { print "cuda " val($0) }
	/^GPU [0-9A-Fa-f]+:/ { emit(); bus = tolower($2); sub(/[ \t\r]+$/, "", bus); model = uuid = minor = "" }
	/^    Product Name / && model == "" { model = val($0) }
	/^    GPU UUID / && uuid == "" { uuid = val($0) }
	/^    Minor Number / && minor == "" { minor = val($0) }
	END { emit() }' | sort
}

# info_facts prints the same facts from nvidia-container-cli info --csv.
info_facts() {
	awk -F, '
	NR == 2 { print "driver " $1; print "cuda " $2 }
	/^Device Index,/ { dev = 1; next }
	dev && NF >= 7 { printf "gpu %s minor=%s uuid=%s model=%s\n", tolower($6), $2, $5, $3 }' | sort
}

check_info() {
	nvidia-smi -q | smi_facts >"$work/smi.facts"
	# shellcheck disable=SC2086 # NVC_CLI is a command line
	$NVC_CLI info --csv | info_facts >"$work/info.facts" || fail "nvidia-container-cli info failed"
	grep -q '^gpu ' "$work/smi.facts" || fail "no GPU read from nvidia-smi -q"
	if ! diff -u "$work/smi.facts" "$work/info.facts" >"$work/info.diff"; then
		cat "$work/info.diff" >&2
		fail "nvidia-container-cli info differs from nvidia-smi -q (- nvidia-smi, + nvc)"
	fi
	say "ok: info matches nvidia-smi -q: $(grep -c '^gpu ' "$work/smi.facts") GPUs, $(grep '^driver' "$work/smi.facts"), $(grep '^cuda' "$work/smi.facts")"
}

# copy_deps copies each program and the shared objects ldd lists for it
# into the rootfs, at their paths.
copy_deps() {
	for prog in "$@"; do
		for f in "$prog" $(ldd "$prog" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
			mkdir -p "$rootfs$(dirname "$f")"
			cp -L "$f" "$rootfs$f"
		done
	done
}

# make_bundle writes a busybox rootfs whose loader can run nvidia-smi
# (its libraries copied from the host; configure adds the driver's) and a
# runc config that runs nvidia-smi -L after the prestart hook $1.
make_bundle() {
	bundle=$work/bundle rootfs=$work/bundle/rootfs
	rm -rf "$bundle"
	mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/dev" "$rootfs/sys" "$rootfs/tmp" "$rootfs/etc" "$rootfs/usr/bin"
	cp "$(command -v busybox)" "$rootfs/bin/busybox"
	ln -s busybox "$rootfs/bin/sh"
	copy_deps "$(command -v busybox)" "$(command -v nvidia-smi)"
	rm -f "$rootfs$(command -v nvidia-smi)" # configure mounts the driver's own
	(cd "$bundle" && runc spec)
	sed -i -e 's/"terminal": true/"terminal": false/' -e 's/"readonly": true/"readonly": false/' \
		-e 's/^\(\s*\)"sh"$/\1"sh", "-c", "nvidia-smi -L"/' \
		-e "s#^\(\s*\)\"ociVersion\": \(.*\)#\1\"ociVersion\": \2\n\1\"hooks\": {\"prestart\": [{\"path\": \"$1\", \"args\": [\"hook\"], \"env\": [\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\"]}]},#" \
		"$bundle/config.json"
}

# run_variant NAME ARGS...: configure with ARGS in a fresh container, check
# nvidia-smi -L inside, and print how long configure took.
run_variant() {
	name=$1
	shift
	hook=$work/hook.sh
	cat >"$hook" <<HOOK
#!/bin/sh
extra='$*'
pid=\$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
start=\$(date +%s%N)
$NVC_CLI configure --device=all --utility \${extra:+"\$extra"} --pid="\$pid" $work/bundle/rootfs || exit 1
echo \$(( (\$(date +%s%N) - start) / 1000000 )) >$work/ms
HOOK
	chmod +x "$hook"
	make_bundle "$hook"
	id=nvc-gpu-check-$$
	if ! (cd "$work/bundle" && runc run "$id") >"$work/inside" 2>"$work/inside.err"; then
		runc delete -f "$id" >/dev/null 2>&1 || true
		cat "$work/inside.err" >&2
		fail "$name: runc run with configure as its hook failed"
	fi
	printf '%s\n' "$gpus" | sort >"$work/host.L"
	sort "$work/inside" >"$work/inside.L"
	if ! diff -u "$work/host.L" "$work/inside.L" >&2; then
		fail "$name: nvidia-smi -L in the container differs from the host's (- host, + container)"
	fi
	say "ok: $name: nvidia-smi -L inside lists the host's $(wc -l <"$work/host.L") GPUs; configure took $(cat "$work/ms") ms"
}

check_container() {
	[ "$(id -u)" -eq 0 ] || fail "the container step needs root (runc)"
	command -v runc >/dev/null || fail "the container step needs runc"
	command -v busybox >/dev/null || fail "the container step needs busybox"
	i=0
	while [ "$i" -lt "${GPU_CHECK_RUNS:-3}" ]; do
		run_variant "without NVML"
		run_variant "with NVML" "--require=arch>=1.0"
		i=$((i + 1))
	done
}

for step in ${GPU_CHECK_STEPS:-info container}; do
	case $step in
	info) check_info ;;
	container) check_container ;;
	*) fail "unknown step $step" ;;
	esac
done
say "passed"
