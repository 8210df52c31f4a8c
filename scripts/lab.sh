#!/usr/bin/env bash
# make lab [LAB=<lab file or shipped lab name>] [LAB_DIR=<dir>] [LAB_KEEP=1] [START=<state>] [PVE_RELEASE=<release>]:
# runs a configuration against the PVE simulator (cmd/pvesim), end to end, and prints a
# summary of at most ~60 lines; the CLI's full output goes to a log file the summary names.
#   1. build: cmd/pvesim, cmd/lab-summary and the provider into a temp dir;
#   2. start simulator: pvesim from the lab file (default: examples/labs/reference/lab.json,
#      whose nodes start as the PVE installer leaves them: fresh-install) on free 127.0.0.1
#      ports; its one JSON line gives each node's endpoint, root password, fingerprint, sshd;
#   3. the configuration is copied to a temp work dir (no state lands in the repo; a
#      configuration in the repository keeps its place beside examples/modules, so module sources
#      resolve); with a dev_overrides CLI config (no init) it runs: get (only when it has
#      module blocks), plan -out, apply of that plan, output, show (the state), and a second
#      plan -detailed-exitcode that must be empty. plan and apply run with -json: the log
#      gets their messages and diagnostics as text, plus the full plan (show of the plan file);
#   4. stops pvesim (SIGTERM, then SIGKILL after 10 s) unless LAB_KEEP=1, and prints the
#      summary (cmd/lab-summary): the phases with their durations and API requests, resources
#      by type, each node's network reloads and where its management address went (from
#      pvesim's request log: the cutover from the installer's vmbr0 takes one reload), the
#      provider's diagnostics (errors in full: a refusal at plan shows its message), Ceph
#      health, the VMs, where the state and the logs are, and what to run next.
# The configuration is LAB_DIR, else the lab file's directory when it holds *.tf files
# (examples/labs/diskless, examples/labs/consumer), else examples/homelab. It gets the
# nodes' endpoints, root@pam passwords and certificate fingerprints as TF_VAR_nodes and
# their SSH servers (host keys in a known_hosts file, the lab's root key) as TF_VAR_ssh,
# for whatever node names the lab file has.
# START overrides the lab file's starting state (fresh-install, cluster, hand-built),
# PVE_RELEASE its PVE release. The temp dir (logs, state; not the binaries) is kept;
# LAB_KEEP=1 also keeps the binaries and leaves pvesim running, with lab.env to source
# for terraform -chdir=<work dir> plan (the summary prints the commands and the pid to kill).
# FAULTS=<fault spec> [FAULT_SEED=<n>] runs it under pvesim's injected faults (pvesim -h).
set -euo pipefail
# A step that fails says which (set -e alone stops without a word).
trap 'echo "lab.sh: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pvesim_root=$root
pvesim_tag=lab.sh
# shellcheck source=scripts/lib/pvesim.sh
. "$root/scripts/lib/pvesim.sh"
pvesim_no_args "${BASH_SOURCE[0]}" "$@"

lab_file="${LAB:-}"
[ -z "$lab_file" ] || lab_file="$(pvesim_resolve_lab "$lab_file")"
if [ -n "${LAB_DIR:-}" ]; then
	lab_dir=$LAB_DIR
elif [ -n "$lab_file" ] && compgen -G "$(dirname "$lab_file")/*.tf" >/dev/null; then
	lab_dir="$(dirname "$lab_file")"
else
	lab_dir="$root/examples/homelab"
fi
[ -d "$lab_dir" ] || pvesim_die "$lab_dir does not exist"
lab_dir="$(cd "$lab_dir" && pwd)"
compgen -G "$lab_dir/*.tf" >/dev/null || pvesim_die "$lab_dir holds no *.tf files"

# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
cli="$TF_ACC_TERRAFORM_PATH"
cli_version="$("$cli" version 2>/dev/null | sed -n 1p)"
keep="${LAB_KEEP:-}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pve-lab.XXXXXX")"
log="$tmp/lab.log"
: >"$log"
work="$tmp/work"
result="FAILED"
pvesim_release=""

# The phases: one line each in phases.tsv (name, start, end, exit status, the request
# log's line count at its start and end), read by cmd/lab-summary.
now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi; }
requests_so_far() { if [ -f "$tmp/requests.jsonl" ]; then wc -l <"$tmp/requests.jsonl" | tr -d ' '; else echo 0; fi; }
phase=""
phase_begin() {
	phase=$1
	phase_t0="$(now)"
	phase_r0="$(requests_so_far)"
	echo "lab.sh: $phase"
	printf '\n===== %s =====\n' "$phase" >>"$log"
}
phase_end() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$phase_t0" "$(now)" "$1" "$phase_r0" "$(requests_so_far)" >>"$tmp/phases.tsv"
	phase=""
}

summary_bin=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -z "$phase" ] || phase_end "$rc"
	if [ "$keep" = 1 ] && [ -n "$pvesim_pid" ]; then
		# Left running for the commands the summary prints; it is stopped with kill <pid>.
		echo "$pvesim_pid" >"$tmp/pvesim.pid"
	else
		pvesim_stop >>"$log"
		rm -f "$tmp/pvesim.pid"
	fi
	# The logs and the state stay; the binaries (tens of MB) only for LAB_KEEP=1.
	[ "$keep" = 1 ] || rm -rf "$tmp/bin" "$tmp/plugins" "$work/.terraform"
	local args=(-dir "$tmp" -repo "$root" -result "$result" -cli "$cli" -cli-version "$cli_version"
		-release "${pvesim_release:-default}" -lab "${pvesim_lab:-}" -lab-dir "$lab_dir" -lab-dir-arg "${LAB_DIR:-}" -work "$work"
		-lab-name "${LAB:-}" -start "${START:-}" -keep="$([ "$keep" = 1 ] && echo true || echo false)")
	if [ -n "$summary_bin" ] && [ -x "$summary_bin" ]; then
		"$summary_bin" "${args[@]}" || echo "lab.sh: lab-summary failed; the log: $log"
		[ "$keep" = 1 ] || rm -f "$summary_bin"
	else
		# Built before anything else; without it, the log says why.
		echo "lab.sh: $result (the log: $log)"
		tail -n 20 "$log" || true
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "lab.sh: the full log: $log"
phase_begin build
# lab-summary first: it reports even when the rest does not build.
go build -o "$tmp/lab-summary" "$root/cmd/lab-summary" >>"$log" 2>&1
summary_bin="$tmp/lab-summary"
pvesim_build "$tmp" >>"$log" 2>&1
phase_end 0

phase_begin "start simulator"
pvesim_lab_args "$tmp" "$lab_file" "${START:-}" "${PVE_RELEASE:-}"
# Tasks take 200 ms (PVE's take seconds); failed logins wait 3 s as on PVE.
# FAULTS / FAULT_SEED: a fault spec for pvesim (pvesim -h; make sim documents them).
lab_fault_args=()
[ -z "${FAULTS:-}" ] || lab_fault_args+=(-faults "$FAULTS")
[ -z "${FAULT_SEED:-}" ] || lab_fault_args+=(-fault-seed "$FAULT_SEED")
pvesim_start "$tmp" "$(pvesim_free_port "$pvesim_node_count")" -task-duration 200ms -auth-delay 3s ${lab_fault_args[@]+"${lab_fault_args[@]}"}
pvesim_client_files "$tmp"
# shellcheck disable=SC2090 # HCL values: their quotes are data, not shell syntax
export TF_VAR_nodes TF_VAR_ssh
{
	echo "pvesim (pid $pvesim_pid) serves nodes $pvesim_nodes${pvesim_lab:+ of ${pvesim_lab#"$root"/}}:"
	pvesim_node_table
} >>"$log"

# A configuration in the repository keeps its place beside examples/modules, so that
# its module sources (../modules/pve-ceph-cluster) resolve in the copy; any other one
# is copied alone.
case "$lab_dir" in
"$root"/*)
	mkdir -p "$tmp/repo/examples"
	cp -R "$root/examples/modules" "$tmp/repo/examples/modules"
	work="$tmp/repo/${lab_dir#"$root"/}"
	mkdir -p "$(dirname "$work")"
	;;
esac
cp -R "$lab_dir" "$work"
rm -rf "$work/.terraform" "$work"/terraform.tfstate* "$work"/*.tfplan "$work"/lab.json

pvesim_dev_tfrc "$tmp/dev.tfrc" "$tmp/plugins"
export TF_CLI_CONFIG_FILE="$tmp/dev.tfrc" TOFU_CLI_CONFIG_FILE="$tmp/dev.tfrc"
export TF_IN_AUTOMATION=1
# lab.env: what the commands after the lab need (single-quoted values; none holds a quote).
{
	printf "export TF_VAR_nodes='%s'\n" "$TF_VAR_nodes"
	printf "export TF_VAR_ssh='%s'\n" "$TF_VAR_ssh"
	printf "export TF_CLI_CONFIG_FILE='%s'\n" "$tmp/dev.tfrc"
	printf "export TOFU_CLI_CONFIG_FILE='%s'\n" "$tmp/dev.tfrc"
} >"$tmp/lab.env"
chmod 600 "$tmp/lab.env"
phase_end 0

tf() {
	local cmd=$1
	shift
	"$cli" -chdir="$work" "$cmd" -no-color "$@"
}
# tf_json NAME CMD ARGS...: runs CMD with -json into NAME.jsonl and appends it as text
# to the log; returns CMD's exit status.
tf_json() {
	local name=$1 cmd=$2 rc=0
	shift 2
	tf "$cmd" -json "$@" >"$tmp/$name.jsonl" 2>>"$log" || rc=$?
	"$summary_bin" -render <"$tmp/$name.jsonl" >>"$log" || true
	return "$rc"
}

# Installs the configuration's modules (local paths; the provider comes from dev_overrides).
if grep -qE '^[[:space:]]*module[[:space:]]+"' "$work"/*.tf; then
	phase_begin "get modules"
	tf get >>"$log" 2>&1
	phase_end 0
fi

phase_begin plan
rc=0
tf_json plan plan -input=false -out="$tmp/apply.tfplan" || rc=$?
phase_end "$rc"
[ "$rc" = 0 ] || exit "$rc"
printf '\n===== the plan =====\n' >>"$log"
tf show "$tmp/apply.tfplan" >>"$log" 2>&1 || true

phase_begin apply
rc=0
tf_json apply apply -input=false "$tmp/apply.tfplan" || rc=$?
phase_end "$rc"
[ "$rc" = 0 ] || exit "$rc"

phase_begin "outputs and state"
tf output -json >"$tmp/outputs.json" 2>>"$log"
tf output >>"$log" 2>&1
tf show -json >"$tmp/tfstate.json" 2>>"$log"
phase_end 0

phase_begin "second plan"
rc=0
tf_json second-plan plan -input=false -detailed-exitcode -out="$tmp/second.tfplan" || rc=$?
phase_end "$rc"
if [ "$rc" = 2 ]; then
	printf '\n===== the second plan =====\n' >>"$log"
	tf show "$tmp/second.tfplan" >>"$log" 2>&1 || true
fi
[ "$rc" = 0 ] || exit 1
result="OK"
