#!/bin/sh
# apply-steps.sh: system calls per step of one 8-GPU Apply (BenchmarkApply's
# plan, pivoted container on tmpfs), the mean of three: runs
# TestApplyStepMarks under strace -f and counts, between its markers,
# every system call but the Go runtime's own (futex, signals, memory,
# scheduling, thread creation). Run it as root from the repository.
# Output: one line per step, "step calls name:count ...", then the total.
set -eu
out=${OUT:-$(mktemp -d /tmp/apply-steps.XXXXXX)}
top=$(git rev-parse --show-toplevel)
cd "$top"
go test -c -o "$out/nvcontainer.test" ./nvcontainer
(cd nvcontainer && NVC_STEP_MARKS=1 strace -f -o "$out/trace" \
	"$out/nvcontainer.test" -test.run '^TestApplyStepMarks$' -test.count 1 >"$out/test.log")
awk '
	BEGIN {
		split("check open cgroup enter tmpfs mount symlink ldcache commit", order, " ")
		rt = "^(futex|nanosleep|sched_yield|rt_sig[a-z]*|sigaltstack|mmap|munmap|madvise|mprotect|clone3?|epoll_[a-z]*|tgkill|getpid|exit|set_robust_list|prctl|rseq|faccessat2?)$"
	}
	match($0, /"\/nvc-step\/[a-z]+"/) {
		s = substr($0, RSTART + 11, RLENGTH - 12)
		if (s == "begin") { step = "check"; runs++ } else if (s == "end") step = "" ; else step = s
		next
	}
	step == "" { next }
	{
		line = $0
		sub(/^[0-9]+ +/, "", line)
		if (line ~ /^<\.\.\./ || line ~ /^---/ || line ~ /^\+\+\+/) next
		if (!match(line, /^[a-z_0-9]+\(/)) next
		name = substr(line, 1, RLENGTH - 1)
		if (name ~ rt) next
		n[step]++; c[step, name]++; names[name] = 1
	}
	END {
		for (i = 1; i <= 9; i++) {
			s = order[i]; line = sprintf("%-8s %6.1f ", s, n[s] / runs)
			for (k in names) if (c[s, k]) line = line sprintf(" %s:%g", k, c[s, k] / runs)
			print line; total += n[s]
		}
		printf "total    %6.1f  (%d runs)\n", total / runs, runs
	}' "$out/trace"
echo "apply-steps: trace in $out/trace" >&2
