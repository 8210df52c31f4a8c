#!/usr/bin/env bash
# scripts/fuzz.sh: run every go fuzz target (func FuzzX in a _test.go under internal/) for a
# bounded time each, one after another (go test -fuzz takes one target per package and run).
#   FUZZTIME   execs (or time) per target (default 5000x; go test -fuzztime syntax, e.g. 5000x or
#              30s; a duration can fail spuriously with "context deadline exceeded" on Go < 1.27,
#              go.dev/issue/75804)
#   FUZZPAR    fuzz workers per target (default 2)
#   FUZZ_MATCH only targets whose "package-dir FuzzName" matches this regexp (default all)
# A crasher is written to <package>/testdata/fuzz/<FuzzName>/ by go test and fails the run;
# keep it there as a seed once the bug is fixed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

fuzztime="${FUZZTIME:-5000x}"
par="${FUZZPAR:-2}"
match="${FUZZ_MATCH:-.}"

targets=()
while IFS= read -r line; do
	targets+=("$line")
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' internal |
	sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)$|\1 \2|' | sort -u | grep -E -- "$match" || true)

start=$SECONDS
n=0
failed=()
for t in "${targets[@]}"; do
	dir="${t% *}"
	name="${t#* }"
	n=$((n + 1))
	echo "fuzz.sh: [$n/${#targets[@]}] $dir $name (-fuzztime=$fuzztime)"
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "$par" "./$dir" >"${TMPDIR:-/tmp}/fuzz.$$.out" 2>&1; then
		cat "${TMPDIR:-/tmp}/fuzz.$$.out"
		failed+=("$dir $name")
	fi
done
rm -f "${TMPDIR:-/tmp}/fuzz.$$.out"
echo "fuzz.sh: ${#targets[@]} targets, $fuzztime each, $((SECONDS - start))s in all, ${#failed[@]} failed"
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'fuzz.sh: failed: %s\n' "${failed[@]}"
	exit 1
fi
