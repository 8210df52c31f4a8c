#!/usr/bin/env bash
# make adopt [LAB=<lab file or shipped lab name>] [ADOPT_DIR=<dir>] [PVE_RELEASE=<release>]:
# the whole "adopt a lab built by hand" journey (issue #12) against the PVE simulator:
#   1. builds cmd/pvesim, cmd/pve-adopt and the provider;
#   2. starts pvesim from the lab file (default: examples/labs/reference/lab.json) in the
#      hand-built state (what the build log's user did by hand, untidy parts included);
#   3. runs pve-adopt against it (root@pam, the lab's key, its nodes' host keys) into
#      ADOPT_DIR (default .lab/adopt-<lab>, emptied first);
#   4. terraform init (the provider just built, from a local mirror: no network) and plan,
#      prints the plan's summary line (only imports: 0 to add, 0 to change, 0 to destroy),
#      applies it, checks the request log shows no write, and plans again (must be empty).
#      Only the API request log is checked here: the pvesim command writes no log of the SSH
#      commands it ran (-request-log covers the API alone). What runs over SSH is checked by
#      the Go tests instead (internal/adopt's tests, acctest.ReadOnlySSH on Sim.SSHCommands).
# It keeps the generated configuration, its state and pvesim's logs (ADOPT_DIR/.pvesim:
# requests.jsonl, pvesim.log, plan and apply output) for a look afterwards; the simulator
# stops at the end, so the next run starts the lab afresh.
#
# make adopt ENDPOINT=https://<node>:8006 [ADOPT_DIR=<dir>] [ADOPT_ARGS="<more flags>"]:
# runs pve-adopt against that cluster instead (nothing else): PVE_PASSWORD or the terminal
# gives the password; ADOPT_ARGS are more pve-adopt flags (-tls-fingerprint, -ssh-key, ...:
# go run ./cmd/pve-adopt -h). ADOPT_DIR defaults to ./adopted.
set -euo pipefail
# A step that fails says which (set -e alone stops without a word).
trap 'echo "adopt.sh: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pvesim_root=$root
pvesim_tag=adopt.sh
# shellcheck source=scripts/lib/pvesim.sh
. "$root/scripts/lib/pvesim.sh"
pvesim_no_args "${BASH_SOURCE[0]}" "$@"

if [ -n "${ENDPOINT:-}" ]; then
	# A real cluster: the command alone; what to do next is in its summary.
	# shellcheck disable=SC2086 # ADOPT_ARGS are words on purpose
	exec go run ./cmd/pve-adopt -endpoint "$ENDPOINT" -out "${ADOPT_DIR:-adopted}" ${ADOPT_ARGS:-}
fi

start_time=$SECONDS
lab_name="${LAB:-reference}"
lab_file="$(pvesim_resolve_lab "$lab_name")"
lab_base="$(basename "$(dirname "$lab_file")")"
[ "$(basename "$lab_file")" = lab.json ] || lab_base="$(basename "$lab_file" .json)"
if [ -n "${ADOPT_DIR:-}" ]; then
	dir=$ADOPT_DIR
	if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
		pvesim_die "ADOPT_DIR=$dir is not empty: give a new directory (the default .lab/adopt-<lab> is emptied on each run)"
	fi
else
	dir="$root/.lab/adopt-$lab_base"
	rm -rf "$dir"
fi
mkdir -p "$dir/.pvesim"
dir="$(cd "$dir" && pwd)"
sim="$dir/.pvesim"

# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
cli="$TF_ACC_TERRAFORM_PATH"
cli_name="$(basename "$cli")"
cli_version="$("$cli" version 2>/dev/null | sed -n 1p)"
result="FAILED"

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	pvesim_stop >/dev/null
	if [ "$rc" -ne 0 ] && [ -s "$sim/pvesim.log" ]; then
		echo "--- last lines of the pvesim log ---" >&2
		tail -n 20 "$sim/pvesim.log" >&2 || true
	fi
	echo "adopt.sh: $result ($cli_version, ${pvesim_lab#"$root"/}, $((SECONDS - start_time)) s; files in ${dir#"$root"/})"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "adopt.sh: building pvesim, pve-adopt and the provider"
pvesim_build "$sim"
go build -o "$sim/bin/pve-adopt" ./cmd/pve-adopt
pvesim_lab_args "$sim" "$lab_file" hand-built "${PVE_RELEASE:-}"
pvesim_start "$sim" "$(pvesim_free_port "$pvesim_node_count")" -task-duration 200ms
pvesim_client_files "$sim"
echo "adopt.sh: pvesim (pid $pvesim_pid) serves ${pvesim_lab#"$root"/} as built by hand: $pvesim_nodes"

# requests_so_far counts the API requests pvesim has logged; writes_since N the
# POST/PUT/DELETE after the Nth (the ticket login aside: it changes nothing).
requests_so_far() { if [ -f "$sim/requests.jsonl" ]; then wc -l <"$sim/requests.jsonl" | tr -d ' '; else echo 0; fi; }
writes_since() {
	tail -n +"$(($1 + 1))" "$sim/requests.jsonl" | grep -E '"method":"(POST|PUT|DELETE)"' |
		grep -vc '"path":"/access/ticket"' || true
}
ssh_args=()
i=0
for n in $pvesim_nodes; do
	ssh_args+=(-ssh-node "$n=$(pvesim_field "nodes.$i.ssh_endpoint")")
	i=$((i + 1))
done
before="$(requests_so_far)"
echo "adopt.sh: pve-adopt -out ${dir#"$root"/}"
PVE_PASSWORD="$(pvesim_field nodes.0.root_password)" "$sim/bin/pve-adopt" \
	-endpoint "$(pvesim_field nodes.0.endpoint)" -tls-fingerprint "$(pvesim_field nodes.0.tls_fingerprint)" \
	-ssh-key "$sim/id_lab" -known-hosts "$sim/known_hosts" "${ssh_args[@]}" -out "$dir" -force >"$sim/adopt.log"
sed -n '/^Adopted/,/^Set before/{/^Set before/d;p}' "$sim/adopt.log" | sed '/^$/d; s/^/  /'
[ "$(writes_since "$before")" = 0 ] || pvesim_die "pve-adopt wrote to the cluster (see $sim/requests.jsonl)"

# The provider just built, as a local mirror rather than dev_overrides: terraform init then
# runs as it does for a user (offline, recording the provider in .terraform.lock.hcl),
# where dev_overrides would have it query the registry and fail.
target="$(go env GOOS)_$(go env GOARCH)"
for host in registry.terraform.io registry.opentofu.org; do
	mkdir -p "$sim/mirror/$host/pvelab/pve/0.0.1/$target"
	cp "$sim/plugins/terraform-provider-pve" "$sim/mirror/$host/pvelab/pve/0.0.1/$target/terraform-provider-pve_v0.0.1"
done
cat >"$sim/adopt.tfrc" <<TFRC
provider_installation {
  filesystem_mirror {
    path    = "$sim/mirror"
    include = ["registry.terraform.io/pvelab/pve", "registry.opentofu.org/pvelab/pve"]
  }
  direct {
    exclude = ["registry.terraform.io/pvelab/pve", "registry.opentofu.org/pvelab/pve"]
  }
}
TFRC
export TF_CLI_CONFIG_FILE="$sim/adopt.tfrc" TOFU_CLI_CONFIG_FILE="$sim/adopt.tfrc"
export TF_IN_AUTOMATION=1
TF_VAR_password="$(pvesim_field nodes.0.root_password)"
export TF_VAR_password
tf() {
	local cmd=$1 log=$2
	shift 2
	"$cli" -chdir="$dir" "$cmd" -no-color "$@" >"$sim/$log" 2>&1
}
# plan_line LOG: the plan's summary line ("Plan: ..." or "No changes. ...").
plan_line() { grep -E '^(Plan:|No changes\.)' "$sim/$1" | head -n 1 || true; }
show_failure() {
	echo "--- last lines of $1 ---" >&2
	tail -n 40 "$sim/$1" >&2
	pvesim_die "$2"
}

echo "adopt.sh: $cli_name init"
tf init init.log -input=false || show_failure init.log "$cli_name init failed"
echo "adopt.sh: $cli_name plan (must show only imports)"
before="$(requests_so_far)"
rc=0
tf plan plan.log -input=false -out=adopt.tfplan -detailed-exitcode || rc=$?
[ "$rc" != 1 ] || show_failure plan.log "$cli_name plan failed"
echo "  $(plan_line plan.log)"
if ! plan_line plan.log | grep -qE '^Plan: [0-9]+ to import, 0 to add, 0 to change, 0 to destroy\.$'; then
	show_failure plan.log "the first plan is not imports only"
fi
echo "adopt.sh: $cli_name apply"
tf apply apply.log -input=false adopt.tfplan || show_failure apply.log "$cli_name apply failed"
echo "  $(grep -E '^Apply complete' "$sim/apply.log" | head -n 1)"
writes="$(writes_since "$before")"
echo "  API writes during plan and apply: $writes (request log: ${sim#"$root"/}/requests.jsonl)"
[ "$writes" = 0 ] || pvesim_die "the adoption's apply wrote to the cluster"
echo "adopt.sh: $cli_name plan again (must be empty)"
rc=0
tf plan plan2.log -input=false -detailed-exitcode || rc=$?
echo "  $(plan_line plan2.log)"
case "$rc" in
0) ;;
2) show_failure plan2.log "the plan after the adoption is not empty" ;;
*) show_failure plan2.log "$cli_name plan failed" ;;
esac
result="OK: adopted $(grep -c '^import {' "$dir/imports.tf" || true) objects, the first plan only imported, the next one is empty"
