package pvesim

// A lab as data: the hardware of each node and the state the simulator
// starts in, as a user writes it in a lab file (JSON; docs/guides and
// examples/labs). Parsing and validation: LoadLab / ParseLab (lab.go).
// This file holds the types every area shares; rules live beside them.

// Lab is one lab file.
type Lab struct {
	// Name is a label for messages and the env file, such as "reference".
	Name string `json:"name"`
	// PVERelease is the simulated release ("9.1", "8.4"); "" = DefaultRelease.
	PVERelease string `json:"pve_release,omitempty"`
	// Start is the starting state: StartFreshInstall (default),
	// StartCluster or StartHandBuilt.
	Start string `json:"start,omitempty"`
	// ClusterName names the cluster of the cluster and hand-built states.
	ClusterName string `json:"cluster_name,omitempty"`
	// Domain is the DNS domain of the nodes' FQDNs (/etc/hosts).
	Domain string    `json:"domain,omitempty"`
	Nodes  []LabNode `json:"nodes"`
}

// LabNode is one node's hardware and what its installer was given.
type LabNode struct {
	Name       string        `json:"name"`
	Management LabManagement `json:"management"`
	NICs       []LabNIC      `json:"nics"`
	Disks      []LabDisk     `json:"disks"`
	Cores      int           `json:"cores,omitempty"`
	MemoryGiB  int           `json:"memory_gib,omitempty"`
}

// LabManagement is what the PVE installer asked for: the NIC vmbr0 bridges,
// the address (CIDR) and the default gateway.
type LabManagement struct {
	NIC     string `json:"nic"`
	CIDR    string `json:"cidr"`
	Gateway string `json:"gateway"`
}

// LabNIC is a physical NIC. Link false is a NIC without carrier (cable out,
// switch port down).
type LabNIC struct {
	Name      string `json:"name"`
	MAC       string `json:"mac"`
	SpeedMbps int    `json:"speed_mbps"`
	Link      *bool  `json:"link,omitempty"` // nil = up
}

// LabDisk is one block device.
type LabDisk struct {
	Device string `json:"device"` // /dev/sda, /dev/nvme0n1
	Model  string `json:"model"`
	Vendor string `json:"vendor,omitempty"`
	Serial string `json:"serial"`
	// WWN is the World Wide Name PVE lists (SATA and SAS drives); optional.
	WWN        string `json:"wwn,omitempty"`
	SizeBytes  int64  `json:"size_bytes"`
	Rotational bool   `json:"rotational,omitempty"`
	RPM        int    `json:"rpm,omitempty"`
	Transport  string `json:"transport"` // sata, sas, nvme, usb
	// PowerLossProtection: the drive's capacitors flush its cache on power
	// loss, so it may acknowledge sync writes from cache.
	PowerLossProtection bool `json:"power_loss_protection"`
	// SyncWriteIOPS is what fio measures with 4K writes at QD1 and
	// --fsync=1 on this drive; 0 = pvesim's model of the drive family
	// (cli_fio.go).
	SyncWriteIOPS int  `json:"sync_write_iops"`
	Wearout       int  `json:"wearout,omitempty"` // percent left; 0 = 100
	Boot          bool `json:"boot,omitempty"`
}

// The starting states.
const (
	// StartFreshInstall is what the PVE installer leaves: vmbr0 on the
	// management NIC with the address and gateway, the other NICs manual,
	// local + local-lvm, enterprise repositories on, no cluster, no Ceph.
	StartFreshInstall = "fresh-install"
	// StartCluster is fresh-install nodes already clustered.
	StartCluster = "cluster"
	// StartHandBuilt is the end state of the lab built by hand per its
	// build log (reference-lab.md), leftovers included.
	StartHandBuilt = "hand-built"
)

// nodeMgmt is a node's management address: its API and sshd answer only
// while this address is configured on an interface that is up with a
// working path and the gateway is on its subnet (network_reach_model.go).
// nil on nodes started without a lab (the test default): always reachable.
type nodeMgmt struct {
	Address string `json:"address"`
	Prefix  int    `json:"prefix"`
	Gateway string `json:"gateway,omitempty"`
	NIC     string `json:"nic"` // the installer's choice for vmbr0
	FQDN    string `json:"fqdn,omitempty"`
}

// simNIC is one physical NIC's hardware; Link is its carrier.
type simNIC struct {
	Name      string `json:"name"`
	MAC       string `json:"mac"`
	SpeedMbps int    `json:"speed_mbps"`
	Link      bool   `json:"link"`
}
