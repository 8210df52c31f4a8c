#!/usr/bin/env bash
# make test: everything that runs against the simulator, no cluster and no network.
#   go vet ./...; go test -count=1 ./...; the acceptance tests again against PVE 8.4; every fuzz target for
#   FUZZTIME (default 2s; FUZZTIME=0 skips) with scripts/fuzz.sh; scripts/docs.sh --check
# PVE_* variables are cleared so a configured live cluster is never touched (make testacc is
# for that). The CLI comes from scripts/env.sh: terraform/tofu on PATH, or OpenTofu built
# from tools/tofu. Extra go test flags: GOTESTFLAGS="-run TestFoo -v" make test
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

while read -r v; do
	unset "$v"
done < <(compgen -e | grep '^PVE_' || true)

# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
echo "test.sh: CLI $TF_ACC_TERRAFORM_PATH ($("$TF_ACC_TERRAFORM_PATH" version 2>/dev/null | sed -n 1p))"

echo "test.sh: go vet ./..."
go vet ./...

echo "test.sh: go test -count=1 -timeout 45m ${GOTESTFLAGS:+$GOTESTFLAGS }./..."
# shellcheck disable=SC2086
go test -count=1 -timeout 45m ${GOTESTFLAGS:-} ./...

# The acceptance tests once more against the oldest PVE release pvesim simulates.
echo "test.sh: PVESIM_RELEASE=8.4 go test -count=1 -timeout 45m -run TestAcc ./internal/service/..."
# shellcheck disable=SC2086
PVESIM_RELEASE=8.4 go test -count=1 -timeout 45m -run TestAcc ${GOTESTFLAGS:-} ./internal/service/...

# Each parser's fuzz target briefly (seeds already ran as tests above): a bounded search for
# inputs that panic or break a round trip. About 45 targets, one go test per target.
if [ "${FUZZTIME:-2s}" != "0" ]; then
	echo "test.sh: FUZZTIME=${FUZZTIME:-2s} scripts/fuzz.sh"
	FUZZTIME="${FUZZTIME:-2s}" "$root/scripts/fuzz.sh"
fi

echo "test.sh: scripts/docs.sh --check"
"$root/scripts/docs.sh" --check
