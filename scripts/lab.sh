#!/usr/bin/env bash
# make lab: runs examples/homelab against the PVE simulator (cmd/pvesim), end to end:
#   1. builds cmd/pvesim and the provider into a temp dir;
#   2. starts pvesim (standalone nodes) on a free 127.0.0.1 port and reads its one JSON
#      line from stdout (per node: endpoint, root_password, tls_fingerprint);
#   3. copies examples/homelab to a temp work dir (no state lands in the repo) and, with a
#      dev_overrides CLI config (no init), runs apply -auto-approve, output, and
#      plan -detailed-exitcode; a non-empty second plan fails the job;
#   4. always stops pvesim (SIGTERM, then SIGKILL after 10 s) and prints a summary.
# The nodes start standalone, as after a fresh install; their endpoints, root@pam passwords
# and certificate fingerprints go in as TF_VAR_nodes, their SSH servers (host keys in a
# known_hosts file, the lab's root key) as TF_VAR_ssh.
# LAB_KEEP=1 keeps the temp dir (state, logs) for inspection.
# LAB_DIR=<dir> runs another configuration instead of examples/homelab.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
lab_dir="${LAB_DIR:-$root/examples/homelab}"
if [ ! -d "$lab_dir" ]; then
	echo "lab.sh: $lab_dir does not exist" >&2
	exit 1
fi
lab_dir="$(cd "$lab_dir" && pwd)"

# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
cli="$TF_ACC_TERRAFORM_PATH"
cli_version="$("$cli" version 2>/dev/null | sed -n 1p)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pve-lab.XXXXXX")"
sim_pid=""
result="FAILED"

stop_sim() {
	[ -n "$sim_pid" ] || return 0
	local pid=$sim_pid status=0 i
	sim_pid=""
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "lab.sh: pvesim did not stop within 10s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || status=$?
	echo "lab.sh: pvesim stopped (exit status $status)"
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop_sim
	if [ "$rc" -ne 0 ] && [ -s "$tmp/pvesim.log" ]; then
		echo "--- last lines of the pvesim log ---" >&2
		tail -n 30 "$tmp/pvesim.log" >&2 || true
	fi
	if [ "${LAB_KEEP:-}" = 1 ]; then
		echo "lab.sh: kept $tmp"
	else
		rm -rf "$tmp"
	fi
	echo "lab.sh: $result ($cli_version, ${lab_dir#"$root"/})"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "lab.sh: building pvesim and the provider"
mkdir -p "$tmp/bin" "$tmp/plugins"
go build -o "$tmp/bin/pvesim" ./cmd/pvesim
go build -o "$tmp/plugins/terraform-provider-pve" .

# free_port prints a 127.0.0.1 port P such that P..P+7 are free: pvesim serves node i on
# P+i. A port is taken when a connection succeeds (bash /dev/tcp; no extra tools).
free_port() {
	local p i k ok
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		ok=1
		for k in 0 1 2 3 4 5 6 7; do
			if (exec 3<>"/dev/tcp/127.0.0.1/$((p + k))") 2>/dev/null; then
				ok=0
				break
			fi
		done
		if [ "$ok" = 1 ]; then
			echo "$p"
			return 0
		fi
	done
	echo "lab.sh: no free port found" >&2
	return 1
}
port="$(free_port)"

# Standalone nodes, as a fresh install: the homelab forms the cluster itself.
"$tmp/bin/pvesim" -listen "127.0.0.1:$port" -task-duration 200ms -auth-delay 3s \
	-state "$tmp/state.json" -request-log "$tmp/requests.jsonl" >"$tmp/pvesim.out" 2>"$tmp/pvesim.log" &
sim_pid=$!

# Wait (up to 30 s) for the first complete line on pvesim's stdout.
line=""
for i in $(seq 1 300); do
	if [ -s "$tmp/pvesim.out" ] && [ "$(tail -c 1 "$tmp/pvesim.out" | od -An -c | tr -d ' ')" = '\n' ]; then
		line="$(sed -n 1p "$tmp/pvesim.out")"
		break
	fi
	if ! kill -0 "$sim_pid" 2>/dev/null; then
		echo "lab.sh: pvesim exited before printing its JSON line" >&2
		exit 1
	fi
	sleep 0.1
done
if [ -z "$line" ]; then
	echo "lab.sh: pvesim printed no JSON line within 30s" >&2
	exit 1
fi

field() { printf '%s\n' "$line" | go run -C "$root/tools/jsonfield" . "$1"; }
# TF_VAR_nodes: each node's own API endpoint, root@pam password and certificate
# fingerprint, as an HCL object: { "z2g4a" = { endpoint = "...", ... }, ... }.
nodes="$(field 'nodes.*.name' | paste -sd ' ' -)"
TF_VAR_nodes="{"
i=0
for n in $nodes; do
	TF_VAR_nodes+="\"$n\" = { endpoint = \"$(field "nodes.$i.endpoint")\", password = \"$(field "nodes.$i.root_password")\", tls_fingerprint = \"$(field "nodes.$i.tls_fingerprint")\" }, "
	i=$((i + 1))
done
TF_VAR_nodes+="}"
export TF_VAR_nodes

# TF_VAR_ssh: the lab's root key, a known_hosts file with every node's host key
# (verified, as on a real lab), and each node's simulated sshd address.
field ssh_client_key >"$tmp/id_lab"
chmod 600 "$tmp/id_lab"
: >"$tmp/known_hosts"
ssh_nodes=""
i=0
for n in $nodes; do
	ep="$(field "nodes.$i.ssh_endpoint")"
	printf '[%s]:%s %s\n' "${ep%:*}" "${ep##*:}" "$(field "nodes.$i.ssh_host_key")" >>"$tmp/known_hosts"
	ssh_nodes+="\"$n\" = { address = \"${ep%:*}\", port = ${ep##*:} }, "
	i=$((i + 1))
done
export TF_VAR_ssh="{ private_key_file = \"$tmp/id_lab\", known_hosts_file = \"$tmp/known_hosts\", nodes = { $ssh_nodes} }"
echo "lab.sh: pvesim (pid $sim_pid) serves standalone nodes $nodes from $(field endpoint)"

work="$tmp/work"
cp -R "$lab_dir" "$work"
rm -rf "$work/.terraform" "$work"/terraform.tfstate* "$work"/*.tfplan

cat >"$tmp/dev.tfrc" <<TFRC
provider_installation {
  dev_overrides {
    "registry.terraform.io/pvelab/pve" = "$tmp/plugins"
    "registry.opentofu.org/pvelab/pve" = "$tmp/plugins"
  }
  direct {}
}
TFRC
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

echo "lab.sh: $cli_version apply"
tf apply -auto-approve -input=false
apply_requests="$(requests_so_far)"
echo "lab.sh: outputs"
tf output
echo "lab.sh: second plan (must be empty)"
before_plan="$(requests_so_far)"
set +e
tf plan -detailed-exitcode -input=false
plan_rc=$?
set -e
echo "lab.sh: API requests: apply $apply_requests, second plan $(($(requests_so_far) - before_plan))"
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
