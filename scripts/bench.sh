#!/usr/bin/env bash
# make bench: the performance benchmark of BENCHMARKS.md (internal/bench
# TestBench) against pvesim with PVE's own task durations, scaled by
# BENCH_TIME_SCALE (default 0.2 real seconds per PVE second): (a) a no-change
# plan of the homelab + BENCH_VMS (200) VMs with two disks each, (b) the peer
# comparison's work, apply and plan, (c) the homelab applied from the
# installer's state with its critical path, (d) a rolling restart of its six
# OSDs. Prints one table; BENCH_OUT (default .bench/last.md) keeps it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
out="${BENCH_OUT:-$root/.bench/last.md}"
mkdir -p "$(dirname "$out")"
export PVE_BENCH=1 BENCH_OUT="$out"
start=$(date +%s)
if ! go test -count=1 -timeout 30m -run '^TestBench$' ./internal/bench/ >"$out.log" 2>&1; then
	tail -n 80 "$out.log" >&2
	echo "bench.sh: failed; full log in $out.log" >&2
	exit 1
fi
cat "$out"
echo "bench.sh: $(($(date +%s) - start)) s; table in $out, log in $out.log"
