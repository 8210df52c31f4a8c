package pvesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/pvelab/terraform-provider-pve/examples/labs"
)

// Parsing and validation of lab files (lab_model.go). A user writes the
// file by hand (examples/labs/README.md), so every error names the node
// and the field, says what is wrong and how to fix it, and all errors of
// a file are reported at once.

// DefaultLabDomain is the DNS domain of the nodes' FQDNs when the lab file
// names none: the installer asks for an FQDN, and "lab.example" is a name
// under a reserved TLD (RFC 2606) that never resolves anywhere.
const DefaultLabDomain = "lab.example"

// DefaultLabClusterName is the cluster's name in the cluster and hand-built
// states when the lab file names none.
const DefaultLabClusterName = "lab"

// LoadLab reads and validates a lab file.
func LoadLab(path string) (*Lab, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lab file: %w", err)
	}
	lab, err := ParseLab(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lab, nil
}

// ShippedLab is one of the labs shipped in examples/labs, such as
// "reference", parsed and validated.
func ShippedLab(name string) (*Lab, error) {
	b, err := labs.Get(name)
	if err != nil {
		return nil, err
	}
	lab, err := ParseLab(b)
	if err != nil {
		return nil, fmt.Errorf("examples/labs/%s/lab.json: %w", name, err)
	}
	return lab, nil
}

// ShippedLabNames lists the labs of examples/labs.
func ShippedLabNames() []string { return labs.Names() }

// ParseLab decodes a lab file (JSON, unknown fields refused), fills in
// the defaults (start fresh-install, domain, cluster name, release) and
// validates it.
func ParseLab(b []byte) (*Lab, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var lab Lab
	if err := dec.Decode(&lab); err != nil {
		return nil, jsonPosError(b, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := lineCol(b, dec.InputOffset()-1)
		return nil, fmt.Errorf("line %d:%d: unexpected data after the lab object; a lab file is one JSON object", line, col)
	}
	lab.setDefaults()
	if err := lab.Validate(); err != nil {
		return nil, err
	}
	return &lab, nil
}

// jsonPosError turns encoding/json's errors into ones with line:column.
func jsonPosError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(b, syn.Offset-1) // Offset is just past the bad byte
		return fmt.Errorf("line %d:%d: JSON syntax error: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		line, col := lineCol(b, typ.Offset-1) // the value's last byte
		return fmt.Errorf("line %d:%d: %s must be a JSON %s, not %s", line, col, typ.Field, typ.Type.Kind(), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, col := lineCol(b, int64(len(b)))
		return fmt.Errorf("line %d:%d: the file ends before the lab object does", line, col)
	}
	// DisallowUnknownFields: `json: unknown field "x"`, without an offset;
	// the field's first occurrence as a key is where to look.
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
		name = strings.TrimSuffix(name, `"`)
		where := ""
		if m := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `"\s*:`).FindIndex(b); m != nil {
			line, col := lineCol(b, int64(m[0]))
			where = fmt.Sprintf("line %d:%d: ", line, col)
		}
		return fmt.Errorf("%sunknown field %q; the fields a lab file knows are listed in examples/labs/README.md", where, name)
	}
	return err
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(b []byte, off int64) (int, int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off < 0 {
		off = 0
	}
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func (l *Lab) setDefaults() {
	if l.Start == "" {
		l.Start = StartFreshInstall
	}
	if l.PVERelease == "" {
		l.PVERelease = DefaultRelease
	}
	if l.Domain == "" {
		l.Domain = DefaultLabDomain
	}
	if l.ClusterName == "" && l.Start != StartFreshInstall {
		l.ClusterName = DefaultLabClusterName
	}
}

var (
	// A Linux interface name (dev_valid_name: 1-15 bytes, no '/', ':' or
	// white space) that PVE's pve-iface format also accepts: a letter,
	// then letters, digits and '_'.
	labNICNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]{1,14}$`)
	labDevRE     = regexp.MustCompile(`^/dev/[a-zA-Z0-9/]+$`)
	labNVMeRE    = regexp.MustCompile(`^/dev/nvme\d+n\d+$`)
	labDomainRE  = regexp.MustCompile(`^(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?))*$`)
)

// labTransports are the buses a lab disk may sit on.
var labTransports = []string{"sata", "sas", "nvme", "usb"}

// Validate checks a lab with its defaults applied (ParseLab does both);
// every problem is reported, one per line.
func (l *Lab) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	if !slices.Contains(Releases(), l.PVERelease) {
		add("pve_release: %q is not a simulated release; use one of %s", l.PVERelease, strings.Join(Releases(), ", "))
	}
	switch l.Start {
	case StartFreshInstall, StartCluster, StartHandBuilt:
	default:
		add("start: %q is not a starting state; use %q (the installer's state, the default), %q or %q",
			l.Start, StartFreshInstall, StartCluster, StartHandBuilt)
	}
	if l.ClusterName != "" && (!nodeNameRE.MatchString(l.ClusterName) || len(l.ClusterName) > 15) {
		add("cluster_name: %q is not a valid cluster name; pvecm takes 1-15 letters, digits and '-', not starting or ending with '-'", l.ClusterName)
	}
	if l.Domain != "" && (!labDomainRE.MatchString(l.Domain) || len(l.Domain) > 253) {
		add("domain: %q is not a DNS domain; use labels of letters, digits and '-' separated by dots, such as %q", l.Domain, DefaultLabDomain)
	}
	if len(l.Nodes) == 0 {
		add("nodes: the lab has no nodes; list at least one")
	}

	nodeSeen := map[string]int{}
	addrSeen := map[string]string{}
	macSeen := map[string]string{}
	serialSeen := map[string]string{}
	var noBoot, manyBoot []string
	for i, n := range l.Nodes {
		at := fmt.Sprintf("nodes[%d]", i)
		if n.Name != "" {
			at = fmt.Sprintf("nodes[%d] (%s)", i, n.Name)
		}
		nadd := func(field, format string, args ...any) {
			add("%s: %s: %s", at, field, fmt.Sprintf(format, args...))
		}
		switch {
		case n.Name == "":
			nadd("name", "missing; every node needs a name")
		case !nodeNameRE.MatchString(n.Name) || len(n.Name) > 63:
			nadd("name", "%q is not a valid node name; PVE node names are 1-63 letters, digits and '-', not starting or ending with '-' (no dots: the domain goes in the lab's domain)", n.Name)
		default:
			if j, dup := nodeSeen[strings.ToLower(n.Name)]; dup {
				nadd("name", "%q is already the name of nodes[%d]; node names must be unique", n.Name, j)
			} else {
				nodeSeen[strings.ToLower(n.Name)] = i
			}
		}
		if n.Cores < 0 {
			nadd("cores", "%d is negative; give the CPU thread count or leave it out", n.Cores)
		}
		if n.MemoryGiB < 0 {
			nadd("memory_gib", "%d is negative; give the RAM in GiB or leave it out", n.MemoryGiB)
		}

		// NICs.
		if len(n.NICs) == 0 {
			nadd("nics", "the node has no NICs; list at least the management NIC")
		}
		nicSeen := map[string]bool{}
		for k, nic := range n.NICs {
			f := fmt.Sprintf("nics[%d]", k)
			switch {
			case nic.Name == "":
				nadd(f+".name", "missing; give the kernel's interface name, such as eno1")
			case !labNICNameRE.MatchString(nic.Name):
				nadd(f+".name", "%q is not a usable interface name; Linux allows up to 15 characters without '/', ':' or spaces and PVE needs a letter first, then letters, digits or '_'", nic.Name)
			case nic.Name == "lo" || strings.HasPrefix(nic.Name, "vmbr"):
				nadd(f+".name", "%q is taken: lo is the loopback and the installer creates vmbr0; name the NIC as the kernel does (eno1, enp1s0f0)", nic.Name)
			case nicSeen[nic.Name]:
				nadd(f+".name", "%q is listed twice; NIC names must be unique on a node", nic.Name)
			}
			nicSeen[nic.Name] = true
			hw, err := net.ParseMAC(nic.MAC)
			switch {
			case nic.MAC == "":
				nadd(f+".mac", "missing; give the NIC's MAC address, such as 00:1b:21:3a:4f:10")
			case err != nil || len(hw) != 6:
				nadd(f+".mac", "%q is not a MAC address; write six hex octets separated by ':', such as 00:1b:21:3a:4f:10", nic.MAC)
			case hw[0]&1 == 1 || bytes.Equal(hw, make(net.HardwareAddr, 6)):
				nadd(f+".mac", "%s is a multicast or zero address, which no NIC has; use the NIC's unicast MAC", nic.MAC)
			default:
				key := hw.String()
				if other, dup := macSeen[key]; dup {
					nadd(f+".mac", "%s is already the MAC of %s; MAC addresses must be unique in the lab", nic.MAC, other)
				} else {
					macSeen[key] = n.Name + " " + nic.Name
				}
			}
			if nic.SpeedMbps <= 0 {
				nadd(f+".speed_mbps", "%d; give the link speed in Mbit/s, such as 1000, 10000 or 40000", nic.SpeedMbps)
			}
		}

		// Management.
		m := n.Management
		switch {
		case m.NIC == "":
			nadd("management.nic", "missing; name the NIC the installer bridged vmbr0 to")
		case !nicSeen[m.NIC]:
			nadd("management.nic", "%q is not one of the node's NICs; use one listed in nics", m.NIC)
		}
		var subnet netip.Prefix
		pfx, err := netip.ParsePrefix(m.CIDR)
		switch {
		case m.CIDR == "":
			nadd("management.cidr", "missing; give the address typed into the installer with its prefix, such as 172.27.2.10/24")
		case err != nil || !pfx.Addr().Is4() || pfx.Bits() < 1:
			nadd("management.cidr", "%q is not an IPv4 address with a prefix length; write it as 172.27.2.10/24", m.CIDR)
		case pfx.Bits() < 31 && (pfx.Addr() == pfx.Masked().Addr() || pfx.Addr() == lastAddr(pfx)):
			nadd("management.cidr", "%s is the network or broadcast address of %s; give the node's own address", pfx.Addr(), pfx.Masked())
		default:
			subnet = pfx.Masked()
			a := pfx.Addr().String()
			if other, dup := addrSeen[a]; dup {
				nadd("management.cidr", "%s is already the management address of %s; addresses must be unique", a, other)
			} else {
				addrSeen[a] = n.Name
			}
		}
		gw, err := netip.ParseAddr(m.Gateway)
		switch {
		case m.Gateway == "":
			nadd("management.gateway", "missing; give the default gateway typed into the installer")
		case err != nil || !gw.Is4():
			nadd("management.gateway", "%q is not an IPv4 address", m.Gateway)
		case subnet.IsValid() && !subnet.Contains(gw):
			nadd("management.gateway", "%s is outside the management subnet %s; the installer's gateway must be on that subnet", gw, subnet)
		case subnet.IsValid() && gw == pfx.Addr():
			nadd("management.gateway", "%s is the node's own address; give the router's address", gw)
		}

		// Disks.
		devSeen := map[string]bool{}
		boots := 0
		if len(n.Disks) == 0 {
			nadd("disks", "the node has no disks; list at least the boot disk (\"boot\": true)")
		}
		for k, d := range n.Disks {
			f := fmt.Sprintf("disks[%d]", k)
			switch {
			case !labDevRE.MatchString(d.Device):
				nadd(f+".device", "%q is not a block device path; write it as /dev/sda or /dev/nvme0n1", d.Device)
			case devSeen[d.Device]:
				nadd(f+".device", "%s is listed twice; each disk needs its own device", d.Device)
			}
			devSeen[d.Device] = true
			if d.Model == "" {
				nadd(f+".model", "missing; give the model as PVE's disk list shows it (such as INTEL_SSDSC2KB480G8)")
			}
			switch {
			case d.Serial == "":
				nadd(f+".serial", "missing; give the drive's serial number")
			case serialSeen[d.Serial] != "":
				nadd(f+".serial", "%q is already the serial of %s; serial numbers must be unique", d.Serial, serialSeen[d.Serial])
			default:
				serialSeen[d.Serial] = n.Name + " " + d.Device
			}
			if d.SizeBytes <= 0 {
				nadd(f+".size_bytes", "%d; give the disk's size in bytes, such as 480103981056", d.SizeBytes)
			}
			if !slices.Contains(labTransports, d.Transport) {
				nadd(f+".transport", "%q is not a transport; use one of %s", d.Transport, strings.Join(labTransports, ", "))
			}
			if (d.Transport == "nvme") != labNVMeRE.MatchString(d.Device) && labDevRE.MatchString(d.Device) && slices.Contains(labTransports, d.Transport) {
				nadd(f+".transport", "%s on %s: NVMe namespaces are /dev/nvmeXnY and only they are on nvme; fix the device or the transport", d.Transport, d.Device)
			}
			switch {
			case d.Rotational && d.Transport == "nvme":
				nadd(f+".rotational", "an NVMe drive does not rotate; remove rotational")
			case d.Rotational && d.Transport != "usb" && d.RPM <= 0:
				nadd(f+".rpm", "a rotational disk needs its spindle speed, such as 7200, 10000 or 15000")
			case !d.Rotational && d.RPM != 0:
				nadd(f+".rpm", "%d on a disk that does not rotate; set rotational or remove rpm", d.RPM)
			}
			if d.RPM < 0 {
				nadd(f+".rpm", "%d is negative", d.RPM)
			}
			if d.SyncWriteIOPS < 0 {
				nadd(f+".sync_write_iops", "%d is negative; give what fio measures (4K, QD1, --fsync=1) or 0 for the drive family's model", d.SyncWriteIOPS)
			}
			if d.Wearout < 0 || d.Wearout > 100 {
				nadd(f+".wearout", "%d is not a percentage; give the life left, 1-100 (0 means 100)", d.Wearout)
			}
			if d.Boot {
				boots++
				if d.SizeBytes > 0 && d.SizeBytes < 16<<30 {
					nadd(f+".size_bytes", "%d: a boot disk under 16 GiB leaves the installer no room for the thin pool pve/data (local-lvm); pvesim needs at least 17179869184", d.SizeBytes)
				}
			}
		}
		switch {
		case boots == 0 && len(n.Disks) > 0:
			noBoot = append(noBoot, n.Name)
		case boots > 1:
			manyBoot = append(manyBoot, n.Name)
		}
	}
	if len(noBoot) > 0 {
		add("disks: no boot disk on %s; mark the disk the installer used with \"boot\": true", strings.Join(noBoot, ", "))
	}
	if len(manyBoot) > 0 {
		add("disks: more than one boot disk on %s; exactly one disk per node has \"boot\": true", strings.Join(manyBoot, ", "))
	}
	if len(errs) > 0 {
		name := l.Name
		if name == "" {
			name = "lab"
		}
		return fmt.Errorf("%s is not valid:\n  %s", name, strings.Join(errs, "\n  "))
	}
	return nil
}

// lastAddr is an IPv4 prefix's broadcast address.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// cloneLab is a deep copy, so Start never changes the caller's lab.
func cloneLab(l *Lab) *Lab {
	b, _ := json.Marshal(l)
	var out Lab
	_ = json.Unmarshal(b, &out)
	return &out
}
