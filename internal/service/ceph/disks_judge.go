package ceph

import (
	"fmt"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// defaultMinOSDSizeGB is the smallest disk pve_node_disks calls suitable
// for an OSD, in GB (10^9 bytes, as disks are sold). Ceph itself starts at a
// few GB, but a small OSD fills first (CRUSH weighs by size, Ceph stops all
// writes to a pool when one of its OSDs reaches 95 %).
const defaultMinOSDSizeGB = 100

// diskVerdict is what pve_node_disks says about one disk as an OSD.
type diskVerdict struct {
	Suitable bool
	Reasons  []string
	// Family is the drive family from driveFamilies ("" if unknown); PLP
	// is meaningful only when Known.
	Family     string
	PLP, Known bool
}

// judgeDisk decides whether a disk should become an OSD. It is advice for
// a hyper-converged cluster carrying VM disks, stricter than PVE (which only
// refuses disks in use).
func judgeDisk(d pve.Disk, minSize int64) diskVerdict {
	v := diskVerdict{}
	v.Family, v.PLP, v.Known = classifyDrive(d.Model)
	add := func(format string, args ...any) { v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...)) }
	switch {
	case len(d.OSDIDs) > 0:
		ids := make([]string, len(d.OSDIDs))
		for i, id := range d.OSDIDs {
			ids[i] = fmt.Sprintf("osd.%d", id)
		}
		add("already an OSD (%s)", strings.Join(ids, ", "))
	case d.OSDID >= 0:
		add("already an OSD (osd.%d)", d.OSDID)
	case d.DBs > 0 || d.WALs > 0:
		add("in use: holds the block.db/block.wal of %d other OSD(s)", d.DBs+d.WALs)
	case d.Used != "":
		add("in use: %s", d.Used)
	case d.Mounted:
		add("in use: mounted")
	}
	switch d.Type {
	case "hdd":
		rpm := ""
		if d.RPM > 0 {
			rpm = fmt.Sprintf(", %d rpm", d.RPM)
		}
		add("rotational (HDD%s): about 100-200 IOPS, far too slow for VM disks; if you must, give it a block.db on a datacenter SSD and its own pool (device class hdd)", rpm)
	case "usb":
		add("USB device: unreliable transport for an OSD")
	}
	if v.Known && !v.PLP {
		add("consumer drive without power-loss protection (%s): slow sync writes make Ceph slow; measure sync-write IOPS first", v.Family)
	}
	if minSize > 0 && d.Size > 0 && d.Size < minSize {
		add("too small: %s, less than %s", humanGB(d.Size), humanGB(minSize))
	}
	if h := strings.ToUpper(d.Health); h != "" && h != "PASSED" && h != "OK" && h != "UNKNOWN" {
		add("SMART health: %s", d.Health)
	}
	if d.Wearout >= 0 && d.Wearout < 10 && d.Type != "hdd" {
		add("worn out: %d%% of its rated life left", d.Wearout)
	}
	v.Suitable = len(v.Reasons) == 0
	return v
}

func humanGB(b int64) string {
	if b >= 1e12 {
		return fmt.Sprintf("%.2f TB", float64(b)/1e12)
	}
	return fmt.Sprintf("%.0f GB", float64(b)/1e9)
}
