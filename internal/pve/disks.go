package pve

import (
	"context"
	"strings"
)

// Disk is one block device of GET /nodes/{node}/disks/list.
type Disk struct {
	DevPath, Model, Serial, Vendor, WWN string
	Size                                int64
	Type                                string // ssd, hdd, nvme, usb, unknown
	RPM                                 int64
	// Wearout is the percentage of life left; -1 when PVE reports "N/A".
	Wearout int64
	Health  string
	GPT     bool
	Mounted bool
	// Used is PVE's usage ("LVM", "partitions", "BIOS boot", "ZFS", ...), "" when free.
	Used string
	// OSDID is the Ceph OSD on the disk, -1 for none; OSDIDs lists all of them.
	OSDID  int64
	OSDIDs []int64
	// OSDEncrypted: the OSD data on the disk is dm-crypt encrypted.
	OSDEncrypted bool
	// DBs and WALs count the block.db and block.wal LVs (of OSDs on other
	// disks) that live on this disk.
	DBs, WALs int64
	// ByIDLink is a stable /dev/disk/by-id path of the disk ("" if PVE
	// reports none).
	ByIDLink string
}

// HasOSD reports whether OSD id keeps its data on the disk.
func (d Disk) HasOSD(id int64) bool {
	if len(d.OSDIDs) == 0 {
		return id >= 0 && d.OSDID == id
	}
	for _, x := range d.OSDIDs {
		if x == id {
			return true
		}
	}
	return false
}

// Disks lists the node's disks; unusedOnly asks PVE for free disks only.
//
//pve:operation GET /nodes/{node}/disks/list
func (c *Client) Disks(ctx context.Context, node string, unusedOnly bool) ([]Disk, error) {
	p := Params{}
	if unusedOnly {
		p.Set("type", "unused")
	}
	var wire []struct {
		DevPath flexString `json:"devpath"`
		Model   flexString `json:"model"`
		Serial  flexString `json:"serial"`
		Vendor  flexString `json:"vendor"`
		WWN     flexString `json:"wwn"`
		Size    flexInt    `json:"size"`
		Type    flexString `json:"type"`
		RPM     flexString `json:"rpm"`
		Wearout flexString `json:"wearout"`
		Health  flexString `json:"health"`
		GPT     flexBool   `json:"gpt"`
		Mounted flexBool   `json:"mounted"`
		Used    flexString `json:"used"`
		OSDID   flexString `json:"osdid"`
		OSDIDs  []flexInt  `json:"osdid-list"`
		Crypt   flexBool   `json:"osdencrypted"`
		DB      flexInt    `json:"db"`
		WAL     flexInt    `json:"wal"`
		ByID    flexString `json:"by_id_link"`
	}
	if err := c.Get(ctx, "/nodes/"+PathEscape(node)+"/disks/list", p, &wire); err != nil {
		return nil, err
	}
	out := make([]Disk, 0, len(wire))
	for _, w := range wire {
		d := Disk{DevPath: string(w.DevPath), Model: string(w.Model), Serial: string(w.Serial), Vendor: string(w.Vendor),
			WWN: string(w.WWN), Size: int64(w.Size), Type: string(w.Type), RPM: atoiOr(string(w.RPM), 0),
			Wearout: atoiOr(string(w.Wearout), -1), Health: string(w.Health), GPT: bool(w.GPT), Mounted: bool(w.Mounted),
			Used: string(w.Used), OSDID: atoiOr(string(w.OSDID), -1), OSDEncrypted: bool(w.Crypt), DBs: int64(w.DB),
			WALs: int64(w.WAL), ByIDLink: string(w.ByID)}
		for _, id := range w.OSDIDs {
			d.OSDIDs = append(d.OSDIDs, int64(id))
		}
		out = append(out, d)
	}
	return out, nil
}

func atoiOr(s string, def int64) int64 {
	var n flexInt
	if strings.TrimSpace(s) == "" || n.UnmarshalJSON([]byte(`"`+s+`"`)) != nil {
		return def
	}
	return int64(n)
}

// WipeDisk wipes a disk's partition table and signatures (root@pam only);
// returns the UPID (wipedisk).
//
//pve:operation PUT /nodes/{node}/disks/wipedisk
func (c *Client) WipeDisk(ctx context.Context, node, disk string) (string, error) {
	path := "/nodes/" + PathEscape(node) + "/disks/wipedisk"
	var upid string
	if err := c.Put(ctx, path, Params{"disk": disk}, &upid); err != nil {
		return "", err
	}
	return upidOf("PUT", path, upid)
}
