package pvesim

import (
	"sort"
	"strings"
)

// nodeExecState is the part of a node only SSH commands reach: systemd
// units, tuned, NIC rings, files and the local CA trust store.
type nodeExecState struct {
	Units map[string]*simUnit `json:"units"`
	// Tuned is tuned's active profile; "" is none (after tuned-adm off).
	Tuned string `json:"tuned_profile"`
	// Rings are NIC ring sizes changed from their driver defaults.
	Rings map[string]*nicRing `json:"nic_rings,omitempty"`
	// Files are regular files by absolute path; Dirs are directories
	// created beyond the defaults (defaultDirs).
	Files map[string]*simFile `json:"files,omitempty"`
	Dirs  []string            `json:"dirs,omitempty"`
	// CATrusted are the files under /usr/local/share/ca-certificates that
	// the last update-ca-certificates linked into /etc/ssl/certs.
	CATrusted []string `json:"ca_trusted,omitempty"`
}

// simUnit is one systemd unit: UnitFileState (enabled, disabled, static,
// masked) and ActiveState (active, inactive, failed).
type simUnit struct {
	Enabled string `json:"enabled"`
	Active  string `json:"active"`
	// Fragment is the unit's file under /etc/systemd/system when it was
	// loaded from there (ssh_units.go); Loaded identifies the unit file
	// and drop-ins systemd last loaded (NeedDaemonReload when they differ).
	Fragment string `json:"fragment,omitempty"`
	Loaded   string `json:"loaded,omitempty"`
	// Sub is the SubState when it is not the one ActiveState implies
	// (a transient timer that elapsed).
	Sub string `json:"sub_state,omitempty"`
	// Since is when the unit last became active (ActiveEnterTimestamp),
	// in microseconds since the epoch; 0 means since the node booted.
	Since int64 `json:"since_us,omitempty"`
}

type nicRing struct {
	RX int `json:"rx"`
	TX int `json:"tx"`
}

// simFile is a regular file.
type simFile struct {
	Content []byte `json:"content"`
	Mode    uint32 `json:"mode"`
	Owner   string `json:"owner"`
	Group   string `json:"group"`
}

// defaultUnits are the units of a PVE node of the reference lab (with
// tuned and systemd-journal-remote installed), as systemctl reports them.
func defaultUnits() map[string]*simUnit {
	u := map[string]*simUnit{}
	for _, n := range []string{
		"pveproxy.service", "pvedaemon.service", "pvestatd.service", "pve-cluster.service", "pve-firewall.service",
		"pve-ha-crm.service", "pve-ha-lrm.service", "pvescheduler.service", "corosync.service", "ssh.service",
		"chrony.service", "cron.service", "networking.service", "tuned.service", "pve-daily-update.timer",
		"rrdcached.service", "postfix.service", "ksmtuned.service", "spiceproxy.service",
	} {
		u[n] = &simUnit{Enabled: "enabled", Active: "active"}
	}
	for _, n := range []string{"systemd-journald.service", "multi-user.target", "pve-daily-update.service"} {
		u[n] = &simUnit{Enabled: "static", Active: "active"}
	}
	u["pve-daily-update.service"].Active = "inactive" // runs from its timer
	u["systemd-journal-upload.service"] = &simUnit{Enabled: "disabled", Active: "inactive"}
	return u
}

// defaultDirs exist on every node.
var defaultDirs = []string{
	"/", "/etc", "/etc/apt", "/etc/apt/sources.list.d", "/etc/ceph", "/etc/default", "/etc/modprobe.d", "/etc/network",
	"/etc/network/interfaces.d", "/etc/pve", "/etc/pve/priv", "/etc/pve/nodes", "/etc/ssh", "/etc/ssl", "/etc/ssl/certs",
	"/etc/ssl/private", "/etc/sysctl.d", "/etc/systemd", "/etc/systemd/system", "/etc/systemd/system/multi-user.target.wants",
	"/etc/tuned", "/etc/udev", "/etc/udev/rules.d", "/etc/security", "/etc/security/limits.d", "/usr", "/usr/local",
	"/usr/local/share", "/usr/local/share/ca-certificates", "/usr/local/bin", "/usr/local/sbin", "/root", "/root/.ssh",
	// scratch space for fio (ssh_fio.go): /var/lib/vz is the "local" storage
	"/tmp", "/var", "/var/tmp", "/var/lib", "/var/lib/vz", "/boot", "/boot/efi",
}

// execState returns node's SSH-side state, created with the lab's
// defaults on first use. Caller holds s.mu.
func (s *Sim) execState(node string) *nodeExecState {
	ns := s.st.Nodes[node]
	if ns.Exec == nil {
		ns.Exec = &nodeExecState{Units: defaultUnits(), Tuned: "balanced"}
	}
	if ns.Exec.Units == nil {
		ns.Exec.Units = defaultUnits()
	}
	return ns.Exec
}

// unitName completes a unit name as systemctl does: without a known
// suffix it is a service.
func unitName(n string) string {
	for _, suf := range []string{".service", ".socket", ".target", ".timer", ".mount", ".path", ".slice", ".scope", ".device", ".swap", ".automount"} {
		if strings.HasSuffix(n, suf) {
			return n
		}
	}
	return n + ".service"
}

// nicModel is a NIC's driver and its ring limits.
type nicModel struct {
	driver           string
	rxMax, txMax     int
	rxMin, txMin     int
	rxDef, txDef     int
	roundPow2, align int // mlx4 rounds up to a power of two; e1000e to a multiple of 8
	txMinExclusive   int // tg3 refuses tx <= MAX_SKB_FRAGS (17)
}

// nicModels are the reference lab's NICs, with the limits their Linux
// drivers report and enforce:
//   - bcm5720 (tg3): 5717-class chips have a 2048-entry standard RX ring,
//     so rx max 2047 (TG3_RX_STD_MAX_SIZE_5717 - 1), tx max 511
//     (TG3_TX_RING_SIZE - 1); defaults rx 200 (TG3_DEF_RX_RING_PENDING),
//     tx 511; tg3_set_ringparam refuses tx <= MAX_SKB_FRAGS (17).
//   - i219 (e1000e): E1000_MAX_RXD/TXD 4096, E1000_MIN_RXD/TXD 64,
//     default 256/256; values are clamped and aligned to 8
//     (REQ_RX_DESCRIPTOR_MULTIPLE).
//   - ConnectX-3 (mlx4_en): MLX4_EN_MAX_RX_SIZE/TX_SIZE 8192, defaults
//     1024/1024 (MLX4_EN_DEF_RX_RING_SIZE); mlx4_en_set_ringparam rounds
//     up to a power of two and clamps to MLX4_EN_MIN_RX_SIZE (256) /
//     MLX4_EN_MIN_TX_SIZE (64).
//
// Sources: drivers/net/ethernet/broadcom/tg3.h, intel/e1000e/e1000.h,
// mellanox/mlx4/mlx4_en.h in Linux; a BCM5720 port's `ethtool -g` shows
// RX 2047 / TX 511.
var nicModels = map[string]nicModel{
	"tg3":     {driver: "tg3", rxMax: 2047, txMax: 511, rxDef: 200, txDef: 511, txMinExclusive: 17},
	"e1000e":  {driver: "e1000e", rxMax: 4096, txMax: 4096, rxMin: 64, txMin: 64, rxDef: 256, txDef: 256, align: 8},
	"mlx4_en": {driver: "mlx4_en", rxMax: 8192, txMax: 8192, rxMin: 256, txMin: 64, rxDef: 1024, txDef: 1024, roundPow2: 1},
}

// nicModelOf returns the model of a physical NIC of the reference lab by
// its name.
func nicModelOf(iface string) (nicModel, bool) {
	switch {
	case strings.HasPrefix(iface, "bcm5720"):
		return nicModels["tg3"], true
	case strings.HasPrefix(iface, "i219"):
		return nicModels["e1000e"], true
	case strings.HasPrefix(iface, "cx3"):
		return nicModels["mlx4_en"], true
	}
	return nicModel{}, false
}

// ring returns iface's current ring sizes.
func (st *nodeExecState) ring(iface string, m nicModel) nicRing {
	if r := st.Rings[iface]; r != nil {
		return *r
	}
	return nicRing{RX: m.rxDef, TX: m.txDef}
}

// tunedProfiles are the profiles tuned ships (tuned 2.2x, Debian), with
// their summaries as `tuned-adm list` prints them.
var tunedProfiles = map[string]string{
	"accelerator-performance":    "Throughput performance based tuning with disabled higher latency STOP states",
	"aws":                        "Optimize for aws ec2 instances",
	"balanced":                   "General non-specialized tuned profile",
	"balanced-battery":           "Balanced profile biased towards power savings changes for battery",
	"cpu-partitioning":           "Optimize for CPU partitioning",
	"cpu-partitioning-powersave": "Optimize for CPU partitioning with additional powersave",
	"desktop":                    "Optimize for the desktop use-case",
	"hpc-compute":                "Optimize for HPC compute workloads",
	"intel-sst":                  "Configure for Intel Speed Select Base Frequency",
	"latency-performance":        "Optimize for deterministic performance at the cost of increased power consumption",
	"network-latency":            "Optimize for deterministic performance at the cost of increased power consumption, focused on low latency network performance",
	"network-throughput":         "Optimize for streaming network throughput, generally only necessary on older CPUs or 40G+ networks",
	"optimize-serial-console":    "Optimize for serial console use.",
	"powersave":                  "Optimize for low power consumption",
	"throughput-performance":     "Broadly applicable tuning that provides excellent performance across a variety of common server workloads",
	"virtual-guest":              "Optimize for running inside a virtual guest",
	"virtual-host":               "Optimize for running KVM guests",
}

func sortedTunedProfiles() []string {
	out := make([]string, 0, len(tunedProfiles))
	for p := range tunedProfiles {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
