package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digest is SHA-1
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Property strings and the config file of qemu-server
// (PVE/QemuServer/Drive.pm, PVE/QemuServer/Network.pm,
// PVE::QemuServer::write_vm_config): what the API accepts for a drive or
// NIC, how PVE writes them back (default key first, then the other keys
// sorted, booleans as 0/1) and the raw file whose SHA-1 is the digest.

// driveBuses are the drive families with their highest index.
var driveBuses = []struct {
	bus string
	max int
}{{"ide", 3}, {"sata", 5}, {"scsi", 30}, {"virtio", 15}}

// isDriveKey is PVE::QemuServer::Drive::is_valid_drivename.
func isDriveKey(k string) bool {
	if k == "efidisk0" || k == "tpmstate0" {
		return true
	}
	bus, idx := splitIndexed(k)
	for _, b := range driveBuses {
		if b.bus == bus && idx >= 0 && idx <= b.max {
			return true
		}
	}
	return false
}

// splitIndexed splits "scsi12" into ("scsi", 12); -1 without an index.
func splitIndexed(k string) (string, int) {
	i := len(k)
	for i > 0 && k[i-1] >= '0' && k[i-1] <= '9' {
		i--
	}
	if i == len(k) || i == 0 {
		return k, -1
	}
	n, err := strconv.Atoi(k[i:])
	if err != nil || (len(k[i:]) > 1 && k[i] == '0') {
		return k, -1
	}
	return k[:i], n
}

var (
	newDiskRE  = regexp.MustCompile(`^(([^/:\s]+):)?(\d+(\.\d+)?)$`)
	diskSizeRE = regexp.MustCompile(`^(\d+(\.\d+)?)([KMGT])?$`)
	tagListRE  = regexp.MustCompile(`^(?i:[a-z0-9_][a-z0-9_\-+.]*)$`)
)

// driveFormat is the property-string format of a drive key (A.1/A.2 of
// the API facts: keys per bus).
func driveFormat(key string) psFormat {
	i := func() psKey { return psOpt(tInteger) }
	n := func() psKey { return psOpt(tNumber) }
	f := psFormat{
		"file":        {typ: tString, defaultKey: true, format: "pve-volume-id-or-qm-path"},
		"format":      psEnum("raw", "qcow", "qed", "qcow2", "vmdk", "cloop"),
		"import-from": {typ: tString, optional: true, format: "pve-volume-id-or-absolute-path"},
		"size":        psOpt(tString).withFormat("disk-size"),
		"volume":      {alias: "file"},
	}
	switch key {
	case "efidisk0":
		f["efitype"] = psEnum("2m", "4m")
		f["ms-cert"] = psEnum("2011", "2023", "2023w", "2023k")
		f["pre-enrolled-keys"] = psOpt(tBoolean)
		return f
	case "tpmstate0":
		f["format"] = psEnum("raw", "qcow2", "vmdk")
		f["version"] = psEnum("v1.2", "v2.0")
		return f
	}
	for _, k := range []string{"bps", "bps_rd", "bps_wr", "iops", "iops_max", "iops_rd", "iops_rd_max", "iops_wr", "iops_wr_max"} {
		f[k] = i()
	}
	for _, k := range []string{"bps_max_length", "bps_rd_max_length", "bps_wr_max_length", "iops_max_length", "iops_rd_max_length", "iops_wr_max_length"} {
		f[k] = i().atLeast(1)
	}
	for _, k := range []string{"bps_rd", "bps_wr", "iops_rd", "iops_wr"} {
		f[k+"_length"] = psKey{alias: k + "_max_length"}
	}
	for _, k := range []string{"mbps", "mbps_max", "mbps_rd", "mbps_rd_max", "mbps_wr", "mbps_wr_max"} {
		f[k] = n()
	}
	for _, k := range []string{"backup", "detect_zeroes", "replicate", "shared", "snapshot"} {
		f[k] = psOpt(tBoolean)
	}
	f["aio"] = psEnum("native", "threads", "io_uring")
	f["cache"] = psEnum("none", "writethrough", "writeback", "unsafe", "directsync")
	f["discard"] = psEnum("ignore", "on")
	f["media"] = psEnum("cdrom", "disk")
	f["rerror"] = psEnum("ignore", "report", "stop")
	f["werror"] = psEnum("enospc", "ignore", "report", "stop")
	f["serial"] = psKey{typ: tString, optional: true, format: "urlencoded", maxLength: 60}
	bus, _ := splitIndexed(key)
	if bus == "scsi" || bus == "virtio" {
		f["iothread"] = psOpt(tBoolean)
		f["ro"] = psOpt(tBoolean)
	}
	if bus != "virtio" {
		f["ssd"] = psOpt(tBoolean)
		f["wwn"] = psOpt(tString).matching(`0x[0-9a-fA-F]{16}`)
	}
	if bus == "scsi" {
		f["queues"] = i().atLeast(2)
		f["product"] = psOpt(tString).matching(`[A-Za-z0-9\-_\s]{0,16}`)
		f["vendor"] = psOpt(tString).matching(`[A-Za-z0-9\-_\s]{0,8}`)
		f["scsiblock"] = psOpt(tBoolean)
	}
	if bus == "ide" {
		f["model"] = psKey{typ: tString, optional: true, format: "urlencoded", maxLength: 120}
	}
	return f
}

var unusedFormat = psFormat{"file": {typ: tString, defaultKey: true, format: "pve-volume-id"}, "volume": {alias: "file"}}

var netModels = []string{"e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e", "i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"}

var netFormat = psFormat{
	"model":     {typ: tString, defaultKey: true, enum: netModels},
	"bridge":    psOpt(tString).withFormat("pve-bridge-id"),
	"firewall":  psOpt(tBoolean),
	"link_down": psOpt(tBoolean),
	"macaddr":   {typ: tString, optional: true, format: "mac-addr"},
	"mtu":       psOpt(tInteger).atLeast(1).atMost(65520),
	"queues":    psOpt(tInteger).atLeast(0).atMost(64),
	"rate":      psOpt(tNumber).atLeast(0),
	"tag":       psOpt(tInteger).atLeast(1).atMost(4094),
	"trunks":    psOpt(tString).matching(`\d+(?:-\d+)?(?:;\d+(?:-\d+)?)*`),
}

var agentFormat = psFormat{
	"enabled":             {typ: tBoolean, defaultKey: true},
	"freeze-fs":           psOpt(tBoolean),
	"freeze-fs-on-backup": {alias: "freeze-fs"},
	"guest-fsfreeze":      {alias: "freeze-fs"},
	"fstrim_cloned_disks": psOpt(tBoolean),
	"type":                psEnum("virtio", "isa"),
}

var vgaFormat = psFormat{
	"type":      {typ: tString, optional: true, defaultKey: true, enum: []string{"cirrus", "qxl", "qxl2", "qxl3", "qxl4", "none", "serial0", "serial1", "serial2", "serial3", "std", "virtio", "virtio-gl", "vmware"}},
	"clipboard": psEnum("vnc"),
	"memory":    psOpt(tInteger).atLeast(4).atMost(512),
}

var machineFormat = psFormat{
	"type":      {typ: tString, optional: true, defaultKey: true, maxLength: 40, pattern: regexp.MustCompile(`^(?:(pc|pc(-i440fx)?-\d+(\.\d+)+(\+pve\d+)?(\.pxe)?|q35|pc-q35-\d+(\.\d+)+(\+pve\d+)?(\.pxe)?|virt(?:-\d+(\.\d+)+)?(\+pve\d+)?))$`)},
	"aw-bits":   psOpt(tNumber).atLeast(32).atMost(64),
	"enable-s3": psOpt(tBoolean),
	"enable-s4": psOpt(tBoolean),
	"viommu":    psEnum("intel", "virtio"),
}

var memoryFormat = psFormat{"current": {typ: tInteger, defaultKey: true, min: f64(16)}}

var bootFormat = psFormat{
	"legacy": {typ: tString, optional: true, defaultKey: true, pattern: regexp.MustCompile(`^[acdn]{1,4}$`)},
	"order":  psOpt(tString),
}

// parseNet parses a netN value; `<model>=<mac>` is the model key with its
// MAC address (keyAlias in Network.pm).
func parseNet(path, v string) (map[string]any, string) {
	var parts []string
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if ok && contains(netModels, k) {
			parts = append(parts, "model="+k, "macaddr="+val)
			continue
		}
		parts = append(parts, part)
	}
	return parsePropertyString(netFormat, path, strings.Join(parts, ","))
}

// printNet is print_net: `<model>=<mac>` first, then the other keys sorted.
func printNet(m map[string]any) string {
	parts := []string{fmt.Sprintf("%v=%v", m["model"], m["macaddr"])}
	for _, k := range sortedKeys(m) {
		if k == "model" || k == "macaddr" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// randomMAC is PVE::Tools::random_ether_addr with the datacenter's prefix.
func randomMAC(prefix string) string {
	if prefix == "" {
		prefix = proxmoxOUI
	}
	parts := strings.Split(prefix, ":")
	for len(parts) < 6 {
		parts = append(parts, fmt.Sprintf("%02X", rand.IntN(256)))
	}
	return strings.ToUpper(strings.Join(parts, ":"))
}

// printProps prints a parsed property string as print_property_string:
// the default key's value bare, then key=value sorted.
func printProps(m map[string]any, defaultKey string) string {
	var parts []string
	if v, ok := m[defaultKey]; ok {
		parts = append(parts, fmt.Sprint(v))
	}
	for _, k := range sortedKeys(m) {
		if k == defaultKey {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// drive is a parsed drive value.
type drive map[string]any

func parseDrive(key, v string) (drive, string) {
	if strings.HasPrefix(key, "unused") {
		m, msg := parsePropertyString(unusedFormat, key, v)
		return drive(m), msg
	}
	m, msg := parseFixedPropertyString("stored-drive", cachedStoredDriveFormat(key), key, v)
	return drive(m), msg
}

// volumeDrive is a config entry (a drive or unusedN) that names a volume.
type volumeDrive struct {
	key string
	d   drive
}

// volumeDrives lists conf's drives and unusedN entries that name a volume
// (CD drives do not), in key order, as PVE::QemuConfig's foreach_volume
// visits them.
func volumeDrives(conf map[string]string) []volumeDrive {
	var out []volumeDrive
	for _, k := range sortedKeys(conf) {
		if !isDriveKey(k) && !strings.HasPrefix(k, "unused") {
			continue
		}
		d, msg := parseDrive(k, conf[k])
		if msg != "" || d == nil || d.isCdrom() {
			continue
		}
		out = append(out, volumeDrive{key: k, d: d})
	}
	return out
}

func (d drive) str(k string) string {
	if v, ok := d[k]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

func (d drive) file() string { return d.str("file") }

func (d drive) isCdrom() bool {
	return d.str("media") == "cdrom" || d.file() == "cdrom" || d.file() == "none"
}

func (d drive) print() string { return printProps(d, "file") }

// parseDiskSize is PVE::JSONSchema::parse_size for disk-size values.
func parseDiskSize(v string) (int64, bool) {
	m := diskSizeRE.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[3]]
	if x*mult >= math.MaxInt64 {
		// Perl keeps the float, which no storage has room for; converted
		// as is, it would wrap to a negative size.
		return math.MaxInt64, true
	}
	return int64(x * mult), true
}

// diskParamFormat checks a drive parameter: property string with the
// allocation syntax allowed.
func diskParamFormat(key string) func(string) string {
	return func(v string) string {
		if strings.HasPrefix(key, "unused") {
			_, msg := parseDrive(key, v)
			return msg
		}
		// The newest release's keys; older releases' schemas override this
		// (driveFormatFor). Stored configs are parsed by parseDrive.
		_, msg := parseFixedShared("drive", cachedDriveFormat(key), key, v)
		return msg
	}
}

func netParamFormat(key string) func(string) string {
	return func(v string) string {
		_, msg := parseNet(key, v)
		return msg
	}
}

// uniqueTags is PVE::GuestHelpers::get_unique_tags with the default
// (alphabetical) ordering.
func uniqueTags(v string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range regexp.MustCompile(`[;,\s]+`).Split(v, -1) {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Strings(out)
	return strings.Join(out, ";")
}

// rawConfig is write_vm_config's file text: description as comments,
// sorted keys, then [PENDING].
func (vm *qemuVM) rawConfig() string {
	gen := func(conf map[string]string, pending bool) string {
		var b strings.Builder
		if d, ok := conf["description"]; ok {
			if d != "" {
				for _, l := range strings.Split(d, "\n") {
					b.WriteString("#" + l + "\n")
				}
			} else if pending {
				b.WriteString("#\n")
			}
		}
		for _, k := range sortedKeys(conf) {
			if k == "description" {
				continue
			}
			fmt.Fprintf(&b, "%s: %s\n", k, conf[k])
		}
		return b.String()
	}
	raw := gen(vm.Config, false)
	pend := map[string]string{}
	for k, v := range vm.Pending {
		pend[k] = v
	}
	if len(vm.PendingDelete) > 0 {
		pend["delete"] = strings.Join(vm.PendingDelete, ",")
	}
	if len(pend) > 0 {
		raw += "\n[PENDING]\n" + gen(pend, true)
	}
	return raw
}

// digest is the SHA-1 of the config file, as parse_vm_config reports it.
func (vm *qemuVM) digest() string {
	sum := sha1.Sum([]byte(vm.rawConfig())) //nolint:gosec // PVE's digest
	return hex.EncodeToString(sum[:])
}

// cleanupUnused is write_vm_config's "remove 'unusedX' settings if we
// re-add a volume": an unusedN whose volume a drive (current or pending)
// uses again goes.
func (vm *qemuVM) cleanupUnused() {
	used := map[string]bool{}
	for _, conf := range []map[string]string{vm.Config, vm.Pending} {
		for k, v := range conf {
			if isDriveKey(k) {
				if d, msg := parseDrive(k, v); msg == "" {
					used[d.file()] = true
				}
			}
		}
	}
	for k, v := range vm.Config {
		if strings.HasPrefix(k, "unused") && used[v] {
			delete(vm.Config, k)
		}
	}
}

// addUnused is add_unused_volume: the lowest free unusedN, no duplicates.
func (vm *qemuVM) addUnused(volid string) (string, error) {
	free := ""
	for i := 255; i >= 0; i-- {
		k := "unused" + strconv.Itoa(i)
		if v, ok := vm.Config[k]; ok {
			if v == volid {
				return k, nil
			}
			continue
		}
		free = k
	}
	if free == "" {
		return "", fmt.Errorf("Too many unused volumes - please delete them first.") //nolint:staticcheck // PVE's text
	}
	vm.Config[free] = volid
	return free, nil
}

// pendingDeleteHas reports whether key is in [PENDING] delete, and forced.
func (vm *qemuVM) pendingDeleteHas(key string) (found, force bool) {
	for _, e := range vm.PendingDelete {
		if strings.TrimPrefix(e, "!") == key {
			return true, strings.HasPrefix(e, "!")
		}
	}
	return false, false
}

// addPendingDelete is add_to_pending_delete (sorted, "!" = force).
func (vm *qemuVM) addPendingDelete(key string, force bool) {
	vm.removePendingDelete(key)
	e := key
	if force {
		e = "!" + key
	}
	vm.PendingDelete = append(vm.PendingDelete, e)
	sort.Slice(vm.PendingDelete, func(i, j int) bool {
		return strings.TrimPrefix(vm.PendingDelete[i], "!") < strings.TrimPrefix(vm.PendingDelete[j], "!")
	})
}

func (vm *qemuVM) removePendingDelete(key string) {
	out := vm.PendingDelete[:0]
	for _, e := range vm.PendingDelete {
		if strings.TrimPrefix(e, "!") != key {
			out = append(out, e)
		}
	}
	vm.PendingDelete = out
	if len(vm.PendingDelete) == 0 {
		vm.PendingDelete = nil
	}
}

// cleanupPending is cleanup_pending: pending values equal to the current
// ones and deletes of unset keys go.
func (vm *qemuVM) cleanupPending() {
	for k, v := range vm.Pending {
		if cur, ok := vm.Config[k]; ok && cur == v {
			delete(vm.Pending, k)
		}
	}
	var keep []string
	for _, e := range vm.PendingDelete {
		if _, ok := vm.Config[strings.TrimPrefix(e, "!")]; ok {
			keep = append(keep, e)
		}
	}
	vm.PendingDelete = keep
}
func randIntN(n int) int { return rand.IntN(n) }
