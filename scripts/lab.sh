#!/usr/bin/env bash
# make lab [LAB=<lab file or shipped lab name>] [LAB_DIR=<dir>] [START=<state>] [PVE_RELEASE=<release>]:
# runs a configuration against the PVE simulator (cmd/pvesim), end to end:
#   1. builds cmd/pvesim and the provider into a temp dir;
#   2. starts pvesim from the lab file (default: examples/labs/reference/lab.json, whose
#      nodes start as the PVE installer leaves them: fresh-install) on free 127.0.0.1
#      ports and reads its one JSON line (per node: endpoint, root_password,
#      tls_fingerprint, sshd);
#   3. copies the configuration to a temp work dir (no state lands in the repo) and, with
#      a dev_overrides CLI config (no init), runs apply -auto-approve, output, and
#      plan -detailed-exitcode; a non-empty second plan fails the job;
#   4. always stops pvesim (SIGTERM, then SIGKILL after 10 s) and prints a summary: the
#      API requests of apply and second plan; the network reloads of each node and where
#      its management address went (from pvesim's request log: the cutover from the
#      installer's vmbr0 takes one reload); and the provider's diagnostics about the
#      cutover and any dead-man rollback, one line each.
# The configuration is LAB_DIR, else the lab file's directory when it holds *.tf files
# (examples/labs/diskless, examples/labs/consumer), else examples/homelab. It gets the
# nodes' endpoints, root@pam passwords and certificate fingerprints as TF_VAR_nodes and
# their SSH servers (host keys in a known_hosts file, the lab's root key) as TF_VAR_ssh,
# for whatever node names the lab file has.
# START overrides the lab file's starting state (fresh-install, cluster, hand-built),
# PVE_RELEASE its PVE release. LAB_KEEP=1 keeps the temp dir (state, logs) for inspection.
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

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pve-lab.XXXXXX")"
result="FAILED"
summary=()
pvesim_release=""

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	pvesim_stop
	if [ "$rc" -ne 0 ] && [ -s "$tmp/pvesim.log" ]; then
		echo "--- last lines of the pvesim log ---" >&2
		tail -n 30 "$tmp/pvesim.log" >&2 || true
	fi
	if [ "${LAB_KEEP:-}" = 1 ]; then
		echo "lab.sh: kept $tmp"
	else
		rm -rf "$tmp"
	fi
	local s
	for s in ${summary[@]+"${summary[@]}"}; do
		echo "lab.sh: $s"
	done
	echo "lab.sh: $result ($cli_version, PVE ${pvesim_release:-default}, ${pvesim_lab:+${pvesim_lab#"$root"/}, }${lab_dir#"$root"/})"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "lab.sh: building pvesim and the provider"
pvesim_build "$tmp"
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
echo "lab.sh: pvesim (pid $pvesim_pid) serves nodes $pvesim_nodes${pvesim_lab:+ of ${pvesim_lab#"$root"/}}:"
pvesim_node_table

# A configuration in the repository keeps its place beside examples/modules, so that
# its module sources (../modules/pve-ceph-cluster) resolve in the copy.
work="$tmp/work"
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

color=()
[ -t 1 ] || color=(-no-color)
tf() {
	local cmd=$1
	shift
	"$cli" -chdir="$work" "$cmd" ${color[@]+"${color[@]}"} "$@"
}

# requests_so_far counts the API requests pvesim has logged (one JSON line each).
requests_so_far() { if [ -f "$tmp/requests.jsonl" ]; then wc -l <"$tmp/requests.jsonl" | tr -d ' '; else echo 0; fi; }

# Installs the configuration's modules (local paths; the provider comes from dev_overrides).
tf get >/dev/null
echo "lab.sh: $cli_version apply"
rm -f "$tmp/apply.rc"
{ tf apply -auto-approve -input=false 2>&1 || echo $? >"$tmp/apply.rc"; } | tee "$tmp/apply.log"
apply_rc="$(cat "$tmp/apply.rc" 2>/dev/null || echo 0)"
apply_requests="$(requests_so_far)"

# The network reloads of the apply per node: the cutover from the installer's vmbr0 to
# the configuration's interfaces takes one per node, guarded by the dead-man rollback.
# Where the management address went is read from the requests that configured it.
node_index() {
	local n i=0
	for n in $pvesim_nodes; do
		if [ "$n" = "$1" ]; then
			echo "$i"
			return 0
		fi
		i=$((i + 1))
	done
	echo -1
}
while read -r node count; do
	[ -n "$node" ] || continue
	word=reloads
	[ "$count" = 1 ] && word=reload
	addr="$(pvesim_field_or "nodes.$(node_index "$node").management_address" "")"
	holder="$(pvesim_mgmt_holder "$tmp/requests.jsonl" "$node" "$addr")"
	if [ -n "$holder" ] && [ "$holder" != vmbr0 ]; then
		summary+=("management cutover: $node $count $word ($addr: vmbr0 -> $holder)")
	else
		summary+=("network: $node $count $word${addr:+ ($addr stays on vmbr0)}")
	fi
done < <(pvesim_reloads "$tmp/requests.jsonl")
# What the provider said about the cutover and any rollback: each warning or error of the
# apply whose summary or first paragraph mentions them, as one line (the summary, then up
# to three paragraphs of the detail, joined).
while IFS= read -r l; do
	summary+=("provider: $l")
done < <(sed -E 's/\x1b\[[0-9;]*m//g; s/^╵.*/<end>/; s/^[│╷]//; s/^ +//' "$tmp/apply.log" | awk '
	function flush() {
		if (head != "" && tolower(head " " first) ~ /rollback|rolled back|cutover|management|dead-man/)
			print head ": " substr(detail, 1, 700)
		head = ""; detail = ""; first = ""; paras = 0; inpara = 0
	}
	/^(Warning|Error): / { flush(); head = $0; next }
	/^(<end>|lab\.sh:|Apply complete|Outputs:)/ { flush(); next }
	head == "" || $0 ~ /^(with |on |[0-9]+: )/ { next }
	$0 == "" { inpara = 0; next }
	!inpara { inpara = 1; paras++ }
	paras > 3 { next }
	paras == 1 { first = first " " $0 }
	{ detail = detail (detail == "" ? "" : " ") $0 }
	END { flush() }' | sort | head -n 20 || true)

[ "$apply_rc" = 0 ] || pvesim_die "apply failed (exit status $apply_rc)"
echo "lab.sh: outputs"
tf output
echo "lab.sh: second plan (must be empty)"
before_plan="$(requests_so_far)"
plan_rc=0
tf plan -detailed-exitcode -input=false || plan_rc=$?
summary=("API requests: apply $apply_requests, second plan $(($(requests_so_far) - before_plan))" ${summary[@]+"${summary[@]}"})
case "$plan_rc" in
0) ;;
2)
	echo "lab.sh: the plan after apply is not empty: the provider does not converge" >&2
	exit 1
	;;
*)
	echo "lab.sh: plan failed (exit status $plan_rc)" >&2
	exit 1
	;;
esac
result="OK: apply succeeded and the second plan is empty"
