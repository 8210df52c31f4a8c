package pve

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// PropertyString is a PVE property string (`ceph:vm-100-disk-0,cache=writeback,size=32G`,
// `virtio=BC:24:11:00:00:01,bridge=vmbr0`): an optional value for the
// format's default key followed by key=value pairs.
type PropertyString struct {
	// Default is the value given without a key ("" when absent).
	Default string
	// Values are the key=value pairs.
	Values map[string]string
}

// splitPropertyString splits s strictly. It refuses duplicate keys and a second
// keyless value, as PVE does.
func splitPropertyString(s string) (PropertyString, error) {
	ps := PropertyString{Values: map[string]string{}}
	seenDefault := false
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if seenDefault {
				return ps, fmt.Errorf("property string %q: more than one value without a key", s)
			}
			ps.Default, seenDefault = part, true
			continue
		}
		if k == "" {
			return ps, fmt.Errorf("property string %q: missing key in %q", s, part)
		}
		if _, dup := ps.Values[k]; dup {
			return ps, fmt.Errorf("property string %q: duplicate key %s", s, k)
		}
		ps.Values[k] = v
	}
	return ps, nil
}

// String prints the property string as PVE writes it: the default value,
// then the keys sorted.
func (p PropertyString) String() string {
	var parts []string
	if p.Default != "" {
		parts = append(parts, p.Default)
	}
	keys := make([]string, 0, len(p.Values))
	for k := range p.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+p.Values[k])
	}
	return strings.Join(parts, ",")
}

// Drive is a VM disk as the config writes it (scsi0, virtio1, efidisk0,
// ...): the volume and its options.
type Drive struct {
	// Volume is the volume id (`ceph:vm-100-disk-0`), a path, `none` or
	// `cdrom`; for a new disk, the allocation `<storage>:<GiB>`.
	Volume string
	// Options are the other keys (cache, discard, iothread, size, ...),
	// booleans as 0/1 the way PVE writes them.
	Options map[string]string
}

// boolDriveKeys are the drive options of boolean type: PVE accepts
// on/yes/true and writes 1/0.
var boolDriveKeys = map[string]bool{
	"backup": true, "detect_zeroes": true, "iothread": true, "replicate": true, "ro": true, "scsiblock": true,
	"shared": true, "snapshot": true, "ssd": true, "pre-enrolled-keys": true,
}

// ParseDrive parses a drive value; `file=` and `volume=` name the volume
// like the keyless value.
func ParseDrive(s string) (Drive, error) {
	ps, err := splitPropertyString(s)
	if err != nil {
		return Drive{}, err
	}
	d := Drive{Volume: ps.Default, Options: map[string]string{}}
	for k, v := range ps.Values {
		switch k {
		case "file", "volume":
			if d.Volume != "" {
				return Drive{}, fmt.Errorf("drive %q: the volume is given twice", s)
			}
			d.Volume = v
		default:
			if boolDriveKeys[k] {
				v = normalizeBool(v)
			}
			d.Options[k] = v
		}
	}
	if strings.TrimSpace(d.Volume) == "" { // a blank volume prints as a skipped part
		return Drive{}, fmt.Errorf("drive %q has no volume", s)
	}
	if strings.Contains(d.Volume, "=") { // "file=a=b": printed bare, the volume would read as a key=value part
		return Drive{}, fmt.Errorf("drive %q: volume %q is not a volume ID or path", s, d.Volume)
	}
	return d, nil
}

func normalizeBool(v string) string {
	switch strings.ToLower(v) {
	case "1", "on", "yes", "true":
		return "1"
	case "0", "off", "no", "false":
		return "0"
	}
	return v
}

// String prints the drive as PVE writes it.
func (d Drive) String() string {
	return PropertyString{Default: d.Volume, Values: d.Options}.String()
}

// Storage is the storage id of the volume ("" for paths and none/cdrom).
func (d Drive) Storage() string {
	if strings.HasPrefix(d.Volume, "/") {
		return ""
	}
	s, _, ok := strings.Cut(d.Volume, ":")
	if !ok {
		return ""
	}
	return s
}

// IsCdrom reports a CD drive (media=cdrom, or none/cdrom as volume).
func (d Drive) IsCdrom() bool {
	return d.Options["media"] == "cdrom" || d.Volume == "none" || d.Volume == "cdrom"
}

// SizeBytes is the size option in bytes (0 when absent).
func (d Drive) SizeBytes() (int64, error) {
	s := d.Options["size"]
	if s == "" {
		return 0, nil
	}
	return ParseDiskSize(s)
}

// With returns a copy with option k set to v ("" removes it).
func (d Drive) With(k, v string) Drive {
	out := Drive{Volume: d.Volume, Options: make(map[string]string, len(d.Options)+1)}
	for key, val := range d.Options {
		out.Options[key] = val
	}
	if v == "" {
		delete(out.Options, k)
	} else {
		out.Options[k] = v
	}
	return out
}

// AllocDrive is the allocation syntax `<storage>:<GiB>` with options: PVE
// allocates a new volume of that size.
func AllocDrive(storage string, sizeBytes int64, opts map[string]string) Drive {
	gib := float64(sizeBytes) / (1 << 30)
	size := strconv.FormatFloat(gib, 'f', -1, 64)
	if gib == math.Trunc(gib) {
		size = strconv.FormatInt(int64(gib), 10)
	}
	d := Drive{Volume: storage + ":" + size, Options: map[string]string{}}
	for k, v := range opts {
		d.Options[k] = v
	}
	return d
}

var diskSizeRE = regexp.MustCompile(`^(\d+(?:\.\d+)?)([KMGT])?$`)

// ParseDiskSize parses PVE's disk sizes (32G, 528K, 1.5T, 1024).
func ParseDiskSize(s string) (int64, error) {
	m := diskSizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("invalid disk size %q", s)
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid disk size %q", s)
	}
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[2]]
	// Beyond int64 the conversion would wrap to a negative size.
	if x*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid disk size %q: larger than any disk", s)
	}
	return int64(x * mult), nil
}

// FormatDiskSize writes a byte count as qemu-server does: the largest of
// T, G, M, K that divides it, else bytes.
func FormatDiskSize(b int64) string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

// netModels are the NIC models of net[n].
var netModels = map[string]bool{
	"e1000": true, "e1000-82540em": true, "e1000-82544gc": true, "e1000-82545em": true, "e1000e": true,
	"i82551": true, "i82557b": true, "i82559er": true, "ne2k_isa": true, "ne2k_pci": true, "pcnet": true,
	"rtl8139": true, "virtio": true, "vmxnet3": true,
}

// NetDevice is a net[n] value.
type NetDevice struct {
	Model string
	// MAC is the address; PVE generates one when it is empty.
	MAC string
	// Options are bridge, tag, firewall, link_down, mtu, queues, rate,
	// trunks (booleans as 0/1).
	Options map[string]string
}

// ParseNetDevice parses `virtio=BC:24:11:..,bridge=vmbr0` (or
// `model=virtio,macaddr=...`).
func ParseNetDevice(s string) (NetDevice, error) {
	ps, err := splitPropertyString(s)
	if err != nil {
		return NetDevice{}, err
	}
	n := NetDevice{Model: ps.Default, Options: map[string]string{}}
	for k, v := range ps.Values {
		switch {
		case netModels[k]:
			if n.Model != "" {
				return NetDevice{}, fmt.Errorf("network device %q: the model is given twice", s)
			}
			n.Model, n.MAC = k, v
		case k == "model":
			n.Model = v
		case k == "macaddr":
			n.MAC = v
		case k == "firewall" || k == "link_down":
			n.Options[k] = normalizeBool(v)
		default:
			n.Options[k] = v
		}
	}
	if n.Model == "" {
		return NetDevice{}, fmt.Errorf("network device %q has no model", s)
	}
	return n, nil
}

// String prints the device as PVE writes it: `<model>=<mac>` (or the bare
// model without a MAC), then the options sorted.
func (n NetDevice) String() string {
	if !netModels[n.Model] {
		// `<model>=<mac>` and a bare model only read back for a known
		// model; name the keys.
		vals := make(map[string]string, len(n.Options)+2)
		maps.Copy(vals, n.Options)
		vals["model"] = n.Model
		if n.MAC != "" {
			vals["macaddr"] = n.MAC
		}
		return PropertyString{Values: vals}.String()
	}
	head := n.Model
	if n.MAC != "" {
		head += "=" + n.MAC
	}
	return PropertyString{Default: head, Values: n.Options}.String()
}

// IsDriveKey reports the config keys that hold drives (ide0-3, sata0-5,
// scsi0-30, virtio0-15, efidisk0, tpmstate0).
func IsDriveKey(k string) bool {
	if k == "efidisk0" || k == "tpmstate0" {
		return true
	}
	for _, b := range []struct {
		bus string
		max int
	}{{"ide", 3}, {"sata", 5}, {"scsi", 30}, {"virtio", 15}} {
		if rest, ok := strings.CutPrefix(k, b.bus); ok {
			n, err := strconv.Atoi(rest)
			return err == nil && n >= 0 && n <= b.max && strconv.Itoa(n) == rest
		}
	}
	return false
}
