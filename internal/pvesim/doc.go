// Package pvesim is a stateful simulator of the Proxmox VE HTTP API and of
// the nodes' sshd. Every provider test runs against it, so it aims at
// fidelity: it accepts what PVE accepts and rejects what PVE rejects, with
// PVE's status codes, error texts and JSON shapes.
//
// # Package map
//
// One package; a file's name says its area and its layer. An area is named
// like the internal/pve file that calls it.
//
//	<area>.go          routes (register<Area>) and handlers of one API area
//	<area>_<topic>.go  more handlers of that area, split where one file would pass ~900 lines
//	<area>_model.go    rules over the state, no HTTP: what PVE's Perl modules decide
//	<area>_hooks.go    test controls: the only files besides sim.go and version.go that export
//	cli_<program>.go   a program the nodes' shells run (cli_coreutils.go: cat, stat, install, mv, rm, cp, mkdir, rmdir;
//	                   cli_ifreload.go; cli_systemd_run.go: transient timers)
//
// The infrastructure:
//
//	sim.go             Start, Options, Info, Close: the simulator's API for tests and cmd/pvesim
//	registry.go        the two registries, built per simulator: API routes and the nodes' programs, units, files
//	server.go          serve: PVE's request order (faults, auth, routing, permissions, proxy, params, handler)
//	server_params.go   the request's parameters as pve-http-server extracts them
//	params.go          the JSON schema checks of PVE::JSONSchema; params_formats.go, params_formats_misc.go:
//	                   the named formats of pve-common, pve-storage, pve-access-control and others
//	options.go         property strings (parse_property_string) and datacenter.cfg
//	state.go           the persisted state: nodes, trust domains (a cluster or a standalone node)
//	tasks.go           UPIDs, workers, task status and logs
//	auth.go            tickets, tokens, CSRF, root@pam-only calls
//	faults.go          injected faults (faults_hooks.go sets them; faults_spec.go: the text spec;
//	                   faults_task.go: what a dying worker cleans up); requestlog.go: the request log
//	ssh.go             the nodes' sshd; ssh_exec.go: one command, sudo; ssh_shell.go: the shell's quoting
//	perf_*.go          what keeps a request cheap at 650 resources: the route tree, memoized parses and
//	                   sizes, reflection-free JSON (byte for byte json.Marshal; BenchmarkNoChangePlan)
//	version.go         the simulated releases (9.1, 8.4) and what differs between them
//	lab_model.go       a lab as data (Lab: nodes, NICs, disks, management); lab.go: LoadLab/ParseLab and
//	                   their validation, ShippedLab (examples/labs)
//	lab_start.go       the starting states newState builds from Options.Lab: the installer's (vmbr0,
//	                   /etc/hosts, pve/data, no Ceph) and clustered; start_handbuilt.go: the lab built by hand
//
// The API areas:
//
//	nodes.go, nodes_resources.go    /nodes, node status, /cluster/resources
//	network.go                      node network (network_render.go: /etc/network/interfaces;
//	                                network_ipv6.go: the IPv6 host-address checks; network_parse.go: reading
//	                                the file as PVE and ifupdown2 do; network_files.go: the file over SSH)
//	network_reach_model.go          whether a node answers on its management address; network_reach.go: the
//	                                listeners gated on it (cut-off nodes hang, as on a cut network)
//	cluster.go                      create, join, status (cluster_corosync_model.go: corosync.conf)
//	options.go                      /cluster/options
//	apt.go, certificates.go, acme.go (acme_apis.go: the DNS APIs per release), nodeconfig.go
//	ceph.go                         init, cfg, status, flags, services (ceph_install.go: packages)
//	ceph_mon.go, ceph_osd.go, ceph_pool.go
//	ceph_model.go                   the PG model and CRUSH; ceph_pool_model.go: pool settings and the autoscaler
//	ceph_config_model.go            the config database and ceph.conf; ceph_options_model.go: known options
//	ceph_units_model.go             the Ceph daemons as systemd units
//	disks.go, storage_disks.go      disks, wipe, LVM-thin, ZFS
//	storage.go                      storage.cfg (storage_params.go: the plugins' properties;
//	                                storage_model.go: volumes; storage_status.go; storage_volinfo.go)
//	pools.go                        resource pools
//	qemu.go                         VM create, list, destroy; qemu_config.go: config and pending;
//	                                qemu_disk.go: allocation, resize, move, unlink; qemu_status.go: power;
//	                                qemu_migrate.go; qemu_format.go: drive and net strings; qemu_options.go: the
//	                                other options; qemu_cpu.go: CPU models and flags; qemu_lock.go: the config lock
//	qemu_model.go                   hotplug and pending rules, status rows
//	ha.go, ha_group.go, ha_rule.go  HA resources, groups (8.4), rules (9.1); ha_model.go: the CRM
//	nodeos_model.go                 a node's files, units, NIC rings, tuned; nodeos_files_model.go: file rules,
//	                                pmxcfs locks; nodeos_systemd_model.go: systemd
//
// The starting states of a lab (lab_model.go):
//
//	start_handbuilt.go              the hand-built state: the reference build log replayed through the API and
//	                                the nodes' shells (start_handbuilt_exec.go), network and node base in
//	                                start_handbuilt_node.go; hbPlan's rules for labs with other hardware
//
// # Faults
//
// Options.Faults (or Sim.SetFaults, Sim.SetFaultSpec at runtime; Sim.ClearFaults)
// makes requests, tasks and sshds fail as PVE's do: 5xx answers, lock
// timeouts with PVE's texts, connections dropped before or after a write,
// tasks that fail (early: no effect; late: the object stays), never end or
// meet their worker's lock, and a node's sshd down. The text form (pvesim
// -faults, make sim FAULTS=) is ParseFaultSpec's, one rule per selector:
//
//	read /nodes/*/ceph/**=5xx:20%; write **=lock:10%; task qmcreate=fail-late:1x
//	POST /pools=drop-after:1x; task cephcreateosd=hang; ssh z2g4b=down
//
// FaultSpecHelp is the whole syntax. Rates are drawn from Options.FaultSeed
// by a hash of the rule, the request's method and path and how often that
// key came before, so the same seed gives the same faults to the same
// requests whatever their interleaving. Every request a fault hit carries
// Request.Fault (the kind) and Request.FaultRule (the rule) in Requests()
// and the JSON-lines request log; a task fault marks the request that
// started the task.
//
// Package-level maps are read-only tables, besides the memo caches of pure
// functions in perf_index.go (parsed property strings, drive formats,
// compiled patterns, row sizes); nothing registers itself.
package pvesim
