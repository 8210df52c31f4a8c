package pvesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// simState is everything that survives a restart when Options.StatePath is
// set. Credentials, CA and leaf keys are kept too, so clients configured
// against a previous run stay valid.
type simState struct {
	// ClusterName is only read from states saved before clusters lived in
	// authDomain.Cluster.
	ClusterName string                 `json:"cluster_name,omitempty"`
	NodeOrder   []string               `json:"node_order"`
	Nodes       map[string]*nodeState  `json:"nodes"`
	Domains     map[string]*authDomain `json:"domains"`
	NextPID     uint32                 `json:"next_pid"`
	// SSHClientKey is the lab's SSH key (PEM) every node authorizes for
	// root (ssh.go).
	SSHClientKey string `json:"ssh_client_key,omitempty"`
}

// authDomain is one trust domain: the whole cluster, or one standalone node.
// PVE shares root's password, tokens and the CA through /etc/pve, so a
// cluster has exactly one.
type authDomain struct {
	RootPassword string `json:"root_password"`
	TokenSecret  string `json:"token_secret"`
	TicketKey    []byte `json:"ticket_key"`
	CACertPEM    string `json:"ca_cert"`
	CAKeyPEM     string `json:"ca_key"`
	// Cluster is /etc/pve/corosync.conf; nil while the domain is one
	// standalone node.
	Cluster *corosyncConf `json:"cluster,omitempty"`
	// ACME is /etc/pve/priv/acme: accounts and plugins (acme.go).
	ACME *acmeConfig `json:"acme,omitempty"`
	// Datacenter is /etc/pve/datacenter.cfg (options.go).
	Datacenter *datacenterCfg `json:"datacenter,omitempty"`
	// Ceph is /etc/pve/ceph.conf and the Ceph cluster (ceph.go); nil until
	// pveceph init.
	Ceph *cephState `json:"ceph,omitempty"`
	// Storage is /etc/pve/storage.cfg (storage_model.go); nil until first
	// used, then the installer's defaults. Volumes are the volumes of its
	// shared storages by volid.
	Storage *storageCfg           `json:"storage,omitempty"`
	Volumes map[string]*simVolume `json:"volumes,omitempty"`
	// HA is /etc/pve/ha and the HA manager status (ha.go); nil until first
	// used.
	HA *haConfig `json:"ha,omitempty"`
	// Pools are the pools of /etc/pve/user.cfg (pools.go); nil until first
	// used.
	Pools *poolsCfg `json:"pools,omitempty"`
	// PVEFiles are other files under /etc/pve written over SSH (ssh_files.go).
	PVEFiles map[string]*simFile `json:"pve_files,omitempty"`
	// locks are pmxcfs lock directories under /etc/pve/priv/lock by name,
	// with when they were taken (ssh_pmxcfs.go); they do not survive a
	// restart.
	locks map[string]time.Time
}

type nodeState struct {
	Name     string   `json:"name"`
	Domain   string   `json:"domain"`
	CertPEM  string   `json:"cert"`
	KeyPEM   string   `json:"key"`
	Physical []string `json:"physical_nics"`
	// NICs is the physical NICs' hardware and carrier, by name; nil on
	// nodes started without a lab (then every NIC has link).
	NICs map[string]*simNIC `json:"nics,omitempty"`
	// Mgmt is the management address (lab_model.go); nil = always
	// reachable.
	Mgmt    *nodeMgmt  `json:"management,omitempty"`
	Applied *netConfig `json:"network_applied"`
	// Staged is /etc/network/interfaces.new; nil when the file does not exist.
	Staged *netConfig `json:"network_staged,omitempty"`
	// Live is what the last reload made live while the file (Applied)
	// has changed since; nil = Applied is live (network_reach_model.go).
	Live *netConfig `json:"network_live,omitempty"`
	// Active lists interfaces that ifreload brought up (the "active" flag).
	Active   []string `json:"active,omitempty"`
	Tasks    []*task  `json:"tasks,omitempty"`
	BootTime int64    `json:"boot_time"`
	// ClockOffset is how far the node's clock is off the host's (the
	// start times of its tasks); tasks_hooks.go.
	ClockOffset time.Duration `json:"clock_offset,omitempty"`
	// Certificates and node config (certificates.go, nodeconfig.go).
	nodeCertState
	// APT is the node's /etc/apt sources (apt.go); nil until first used.
	APT *aptSources `json:"apt,omitempty"`
	// Disks are the node's block devices (disks.go); nil = the lab's default.
	Disks []*simDisk `json:"disks,omitempty"`
	// CephPkgs is the node's Ceph packages (ceph_install.go); Bench what
	// fio did on it (ssh_fio.go). nil until first used.
	CephPkgs *cephPackages `json:"ceph_packages,omitempty"`
	Bench    *benchState   `json:"bench,omitempty"`
	// SSHHostKey is the node's ed25519 host key (PEM); Exec is what SSH
	// commands see and change (ssh.go, ssh_state.go).
	SSHHostKey string `json:"ssh_host_key,omitempty"`
	// VMs are the node's guests by vmid (qemu_model.go).
	VMs map[int]*qemuVM `json:"vms,omitempty"`
	// Volumes are the volumes of node-local storages by volid
	// (storage_model.go).
	Volumes map[string]*simVolume `json:"volumes,omitempty"`
	// StoragePlugins are the third-party storage plugins installed under
	// /usr/share/perl5/PVE/Storage/Custom (drbd, vitastor); ThinPools and
	// ZPools the node's LVM thin pools and ZFS pools (storage_disks.go).
	StoragePlugins []string             `json:"storage_plugins,omitempty"`
	ThinPools      map[string]*thinPool `json:"thin_pools,omitempty"`
	ZPools         map[string]*zPool    `json:"zpools,omitempty"`
	Exec           *nodeExecState       `json:"exec,omitempty"`
}

func loadState(path string) (*simState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var st simState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("parse state %s: %w", path, err)
	}
	if len(st.NodeOrder) == 0 || st.Nodes == nil || st.Domains == nil {
		return nil, fmt.Errorf("state %s: no nodes", path)
	}
	migrateClusterState(&st)
	for _, n := range st.Nodes {
		if n.Applied == nil {
			n.Applied = newNetConfig()
		}
		n.Applied.fixup()
		if n.Staged != nil {
			n.Staged.fixup()
		}
		if n.Live != nil {
			n.Live.fixup()
		}
		// A task cannot survive a restart: like a reboot, it ends unknown.
		for _, t := range n.Tasks {
			if t.Status == "running" {
				t.Status = "stopped"
				t.ExitStatus = "unexpected status"
			}
		}
	}
	return &st, nil
}

// saveLocked writes the state atomically. Caller holds s.mu.
func (s *Sim) saveLocked() {
	if s.opts.StatePath == "" {
		return
	}
	b, err := json.MarshalIndent(s.st, "", "  ")
	if err != nil {
		s.logf("pvesim: marshal state: %v", err)
		return
	}
	tmp := filepath.Join(filepath.Dir(s.opts.StatePath), "."+filepath.Base(s.opts.StatePath)+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		s.logf("pvesim: write state: %v", err)
		return
	}
	if err := os.Rename(tmp, s.opts.StatePath); err != nil {
		s.logf("pvesim: rename state: %v", err)
	}
}
