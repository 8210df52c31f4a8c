package ceph

import (
	"regexp"
	"strings"
)

// Drive families with and without power-loss protection (PLP).
//
// Why this list exists: Ceph acknowledges a write only after it is durable on
// every replica, so BlueStore issues a flush (sync write) for practically
// every client write. A drive with PLP has capacitors that let it
// acknowledge a flush from its DRAM cache; a consumer drive must write
// through to NAND (QLC NAND on the cheap ones), which turns thousands of IOPS
// into hundreds. The reference lab's users built Ceph on an Intel 660p and a
// Samsung PM981a first and measured about 800 4K sync-write IOPS with the
// performance then collapsing; another lab ran WD Green SSDs at under 100
// sync-write IOPS and lost PGs. Datacenter SATA drives (Intel DC S3500/S4510)
// gave 17,500 to 20,000 Q32 write IOPS across the same three nodes.
//
// The list is deliberately small: the families these labs used and their
// usual alternatives, matched on the model string PVE reports (udev's
// ID_MODEL or the NVMe model, upper-cased, underscores as spaces). A model it
// does not know is not judged; whatever the list says, measure sync-write
// IOPS on the bare device before trusting it (fio --direct=1 --fsync=1
// --rw=write --bs=4k --iodepth=1 --numjobs=1; it destroys the data on it).
type driveFamily struct {
	name string
	re   *regexp.Regexp
	plp  bool
}

var driveFamilies = []driveFamily{
	// Consumer and OEM client drives: no power-loss protection.
	{"Intel 660p/665p (QLC NVMe)", regexp.MustCompile(`SSDPEKNW`), false},
	{"Intel 670p (QLC NVMe)", regexp.MustCompile(`SSDPEKNU`), false},
	{"Intel 600p/760p (NVMe)", regexp.MustCompile(`SSDPEKKW`), false},
	{"Intel 540s/545s (SATA)", regexp.MustCompile(`SSDSC2KW`), false},
	{"Samsung EVO/PRO/QVO (retail)", regexp.MustCompile(`SAMSUNG SSD (8[3-7]0|9[5-9]0)\b`), false},
	{"Samsung PM981/PM981a/PM991/PM9A1 (OEM client NVMe)", regexp.MustCompile(`MZVLB|MZVLQ|MZVL2|MZVKW`), false},
	{"Crucial MX/BX/P/T series", regexp.MustCompile(`\bCT\d+(MX|BX|P|T)\d`), false},
	{"WD Blue/Green/Black/Red (client)", regexp.MustCompile(`\bWDS\d+[GT]\d[BGXR]|WD (BLUE|GREEN|BLACK)\b`), false},
	{"Kingston A2000/A400/NV/KC (client)", regexp.MustCompile(`\b(SA2000|SA400|SNVS|SNV[23]S|SKC\d{4})`), false},
	{"SanDisk Ultra/Plus (client)", regexp.MustCompile(`SANDISK SDSSD`), false},
	// Datacenter drives: power-loss protection.
	{"Intel DC S3500/S3510/S3520", regexp.MustCompile(`SSDSC2BB`), true},
	{"Intel DC S3610/S3700/S3710", regexp.MustCompile(`SSDSC2B[AX]`), true},
	{"Intel DC S4500/S4510 (D3-S4510)", regexp.MustCompile(`SSDSC2KB`), true},
	{"Intel DC S4600/S4610 (D3-S4610)", regexp.MustCompile(`SSDSC2KG`), true},
	{"Intel DC P4510/P4610 (NVMe)", regexp.MustCompile(`SSDPE2K[EX]`), true},
	{"Samsung PM883/PM893/SM883/PM863a/SM863a", regexp.MustCompile(`MZ7(LH|L3|KH|LM|KM)`), true},
	{"Samsung PM983/PM9A3 (NVMe)", regexp.MustCompile(`MZ(QLB|1LB|QL2)`), true},
	{"Micron 5200/5300/5400 (SATA)", regexp.MustCompile(`MICRON 5[2-4]00|MTFDDAK`), true},
	{"Kingston DC500/DC600", regexp.MustCompile(`SEDC[56]00`), true},
}

// classifyDrive returns the family a model belongs to and whether that
// family has power-loss protection; known is false for models not listed.
func classifyDrive(model string) (family string, plp, known bool) {
	m := strings.Join(strings.Fields(strings.ToUpper(strings.ReplaceAll(model, "_", " "))), " ")
	for _, f := range driveFamilies {
		if f.re.MatchString(m) {
			return f.name, f.plp, true
		}
	}
	return "", false, false
}
