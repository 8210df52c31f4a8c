#!/usr/bin/env bash
# make test: everything that runs against the simulator, no cluster and no network.
#   go vet ./...; go test -count=1 ./... (TF_ACC=1: lab runs included); a representative subset of the acceptance
#   tests again against PVE 8.4 and, with OpenTofu built from tools/tofu, make lab and that subset; a representative fuzz target per
#   parser family for FUZZTIME (default 3000x; FUZZTIME=0 skips) with scripts/fuzz.sh; scripts/docs.sh --check
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
# Lab runs (acctest.NewLab: the fault matrix, destroy runs) need TF_ACC; with PVE_* cleared
# above it cannot reach a live cluster (acctest.Live needs PVE_ENDPOINT too).
export TF_ACC=1
echo "test.sh $(date +%T): CLI $TF_ACC_TERRAFORM_PATH ($("$TF_ACC_TERRAFORM_PATH" version 2>/dev/null | sed -n 1p))"

echo "test.sh $(date +%T): go vet ./..."
go vet ./...

# Every package, the longest first: go test starts packages in the order given, two at a time
# on two cores, and a long one started last runs on alone (in alphabetical order the Ceph
# package, a quarter of the whole, started half-way and ran on for minutes after the rest).
longest="./internal/service/ceph ./internal/service/qemu ./internal/adopt ./internal/service/network ./internal/acctest ./internal/service/node"
mapfile -t all < <(go list -f '{{.Dir}}' ./... | sed "s|^$root|.|")
pkgs=()
for p in $longest; do pkgs+=("$p"); done
for p in "${all[@]}"; do [[ " $longest " == *" $p "* ]] || pkgs+=("$p"); done
[ "${#pkgs[@]}" = "${#all[@]}" ] || { echo "test.sh: a package of the longest-first list is gone: $longest" >&2; exit 1; }
echo "test.sh $(date +%T): go test -count=1 -timeout 45m ${GOTESTFLAGS:+$GOTESTFLAGS }./... (${#pkgs[@]} packages, longest first)"
# shellcheck disable=SC2086
go test -count=1 -timeout 45m ${GOTESTFLAGS:-} "${pkgs[@]}"

# The acceptance tests once more against the oldest PVE release pvesim simulates: a
# representative subset, not the whole matrix again, in one go test so that its packages
# overlap. Each resource's reference, lifecycle, hand-built adoption and data-source tests,
# which cross most of its API, and every storage type; and every test that branches on the
# release (APT repository files, HA groups vs rules, cluster create/join). Not the fault
# tests (lost answers, failed tasks): what they exercise is the provider's, not the release's.
pve84_packages="./internal/service/apt/ ./internal/service/ha/ ./internal/service/cluster/ ./internal/service/clusteroptions/ ./internal/service/ceph/ ./internal/service/certificate/ ./internal/service/network/ ./internal/service/node/ ./internal/service/qemu/ ./internal/service/storage/"
pve84_sample='^TestAcc[A-Za-z]*_(reference|referenceLab|lifecycle|adoptHandBuilt|everyAttribute[A-Za-z]*|everyType|refusedAtPlan)$|^TestAcc[A-Za-z]*DataSources?$'
pve84_release='^TestAccAPTRepository_answerLost$|^TestAccHA(Rule|Group)$|^TestAccHAResource_release$|^TestAccCluster_createJoinImport$|^TestAccClusterNode_failedJoinLeavesNodeStandalone$'
echo "test.sh $(date +%T): PVESIM_RELEASE=8.4: -run '$pve84_sample|$pve84_release' of $pve84_packages"
# shellcheck disable=SC2086
PVESIM_RELEASE=8.4 go test -count=1 -timeout 45m -run "$pve84_sample|$pve84_release" ${GOTESTFLAGS:-} $pve84_packages

# OpenTofu, when the run above used Terraform: the reference lab through make lab (from the
# installer's state to an empty second plan) and the reference-lab, data-source and a few
# lifecycle (import) acceptance tests, with OpenTofu built from tools/tofu (TEST_TOFU=0 skips
# it). What differs between the CLIs is the protocol and plan handling, not PVE's API.
tofu_sample='^TestAcc[A-Za-z]*_(reference|referenceLab)$|^TestAcc[A-Za-z]*DataSources?$|^TestAcc(CephPool|HAResource|NodeFile|ClusterOptions)_lifecycle$'
if [ "$PVE_TF_CLI_KIND" = terraform ] && [ "${TEST_TOFU:-1}" != 0 ]; then
	"$root/scripts/tools.sh" tofu
	tofu_env=(TF_ACC_TERRAFORM_PATH="$root/.bin/tofu" TF_ACC_PROVIDER_HOST=registry.opentofu.org TF_ACC_PROVIDER_NAMESPACE=hashicorp)
	echo "test.sh $(date +%T): OpenTofu ($("$root/.bin/tofu" version | sed -n 1p)): make lab, and -run '$tofu_sample' of ./internal/service/..."
	env "${tofu_env[@]}" "$root/scripts/lab.sh"
	# shellcheck disable=SC2086
	env "${tofu_env[@]}" go test -count=1 -timeout 45m -run "$tofu_sample" ${GOTESTFLAGS:-} ./internal/service/...
fi

# A bounded fuzz search (every target's seeds already ran as tests above): one representative
# target per parser family, because each go test -fuzz builds an instrumented binary and all ~45
# would cost CI minutes under load. `make fuzz` (or FUZZ_MATCH=. here) runs every target.
ci_fuzz='FuzzParsePropertyString|FuzzParseDrive|FuzzParseUPID|FuzzClientReads|FuzzParseInterfaces|FuzzParseLab|FuzzParseShellLine|FuzzConfFile|FuzzParseRings|FuzzCheckPath|FuzzSplitImportOptions'
# A count, not a duration: Go 1.26's fuzz coordinator can fail a target with "context deadline
# exceeded" and no crasher when a -fuzztime duration ends mid-exec under load (go.dev/issue/75804,
# fixed in 1.27); CI failed that way once on FuzzParseRings. A count has no deadline to race.
if [ "${FUZZTIME:-3000x}" != "0" ]; then
	echo "test.sh $(date +%T): FUZZTIME=${FUZZTIME:-3000x} scripts/fuzz.sh (FUZZ_MATCH=${FUZZ_MATCH:-the CI subset})"
	FUZZTIME="${FUZZTIME:-3000x}" FUZZ_MATCH="${FUZZ_MATCH:-$ci_fuzz}" "$root/scripts/fuzz.sh"
fi

echo "test.sh $(date +%T): scripts/docs.sh --check"
"$root/scripts/docs.sh" --check
