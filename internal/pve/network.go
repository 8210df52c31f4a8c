package pve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Node network configuration. Create/update/delete only edit the staged file
// /etc/network/interfaces.new; nothing changes on the node until ApplyNetwork
// (ifreload -a in a task) or is thrown away by RevertNetwork. This lets the
// provider batch several interface changes into one apply per node.

// NetworkInterface is one interface as GET /nodes/{node}/network reports it
// (the staged view when changes are pending).
type NetworkInterface struct {
	Iface string
	Type  string // bridge, bond, eth, alias, vlan, OVS*, ...

	Active    bool
	Autostart bool
	Exists    bool // the device exists in the kernel

	Method, Method6 string // static, manual, dhcp, ...

	Address, Netmask, CIDR, Gateway string
	Address6, CIDR6, Gateway6       string
	Netmask6                        string
	MTU                             int64  // 0 = unset
	Comments, Comments6             string // raw, PVE appends "\n"
	BridgePorts                     []string
	BridgeVLANAware                 bool
	BridgeVIDs                      string
	Slaves                          []string
	BondMode, BondXmitHashPolicy    string
	BondPrimary                     string
	VLANID                          int64
	VLANRawDevice                   string
	Families                        []string
	Priority                        int64
}

// NetworkList is the node's interface list plus the pending diff between
// /etc/network/interfaces and interfaces.new ("" when nothing is staged).
type NetworkList struct {
	Interfaces []NetworkInterface
	Changes    string
}

// networkWire mirrors PVE's JSON with lenient types: numbers may come as
// strings ("vlan-id":"2", "netmask":"24"), flags as 1/0, "exists" as 1 or null.
type networkWire struct {
	Iface              flexString `json:"iface"`
	Type               flexString `json:"type"`
	Active             flexBool   `json:"active"`
	Autostart          flexBool   `json:"autostart"`
	Exists             flexBool   `json:"exists"`
	Method             flexString `json:"method"`
	Method6            flexString `json:"method6"`
	Address            flexString `json:"address"`
	Netmask            flexString `json:"netmask"`
	CIDR               flexString `json:"cidr"`
	Gateway            flexString `json:"gateway"`
	Address6           flexString `json:"address6"`
	Netmask6           flexString `json:"netmask6"`
	CIDR6              flexString `json:"cidr6"`
	Gateway6           flexString `json:"gateway6"`
	MTU                flexInt    `json:"mtu"`
	Comments           flexString `json:"comments"`
	Comments6          flexString `json:"comments6"`
	BridgePorts        flexString `json:"bridge_ports"`
	BridgeVLANAware    flexBool   `json:"bridge_vlan_aware"`
	BridgeVIDs         flexString `json:"bridge_vids"`
	Slaves             flexString `json:"slaves"`
	BondMode           flexString `json:"bond_mode"`
	BondXmitHashPolicy flexString `json:"bond_xmit_hash_policy"`
	BondPrimary        flexString `json:"bond-primary"`
	VLANID             flexInt    `json:"vlan-id"`
	VLANRawDevice      flexString `json:"vlan-raw-device"`
	Families           []string   `json:"families"`
	Priority           flexInt    `json:"priority"`
}

func (w networkWire) toInterface() NetworkInterface {
	return NetworkInterface{
		Iface: string(w.Iface), Type: string(w.Type),
		Active: bool(w.Active), Autostart: bool(w.Autostart), Exists: bool(w.Exists),
		Method: string(w.Method), Method6: string(w.Method6),
		Address: string(w.Address), Netmask: string(w.Netmask), CIDR: string(w.CIDR), Gateway: string(w.Gateway),
		Address6: string(w.Address6), Netmask6: string(w.Netmask6), CIDR6: string(w.CIDR6), Gateway6: string(w.Gateway6),
		MTU:      int64(w.MTU),
		Comments: string(w.Comments), Comments6: string(w.Comments6),
		BridgePorts: splitIfaceList(string(w.BridgePorts)), BridgeVLANAware: bool(w.BridgeVLANAware),
		BridgeVIDs: string(w.BridgeVIDs),
		Slaves:     splitIfaceList(string(w.Slaves)),
		BondMode:   string(w.BondMode), BondXmitHashPolicy: string(w.BondXmitHashPolicy), BondPrimary: string(w.BondPrimary),
		VLANID: int64(w.VLANID), VLANRawDevice: string(w.VLANRawDevice),
		Families: w.Families,
		Priority: int64(w.Priority),
	}
}

// splitIfaceList splits PVE's interface lists (space- or comma-separated).
// "none" (how ifupdown spells an empty bridge-ports) is an empty list.
func splitIfaceList(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == ';' })
	if len(f) == 1 && f[0] == "none" {
		return nil
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

func networkPath(node string) string { return "/nodes/" + PathEscape(node) + "/network" }

func ifacePath(node, iface string) string { return networkPath(node) + "/" + PathEscape(iface) }

// Network reads all interfaces of a node (staged view) and the pending
// diff in one request.
//
//pve:operation GET /nodes/{node}/network
func (c *Client) Network(ctx context.Context, node string) (*NetworkList, error) {
	data, extras, err := c.GetRaw(ctx, networkPath(node), nil)
	if err != nil {
		return nil, err
	}
	var w []networkWire
	if len(data) > 0 && string(data) != "null" {
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, fmt.Errorf("PVE API GET %s: cannot decode interfaces: %w", networkPath(node), err)
		}
	}
	out := &NetworkList{Interfaces: make([]NetworkInterface, 0, len(w))}
	for _, x := range w {
		out.Interfaces = append(out.Interfaces, x.toInterface())
	}
	if raw, ok := extras["changes"]; ok {
		var ch flexString
		if err := json.Unmarshal(raw, &ch); err == nil {
			out.Changes = string(ch)
		}
	}
	return out, nil
}

// NetworkInterface reads one interface. A missing interface is a 400
// {"iface":"interface does not exist"}, which IsNotFound recognises.
//
//pve:operation GET /nodes/{node}/network/{iface}
func (c *Client) NetworkInterface(ctx context.Context, node, iface string) (*NetworkInterface, error) {
	var w networkWire
	if err := c.Get(ctx, ifacePath(node, iface), nil, &w); err != nil {
		return nil, err
	}
	ni := w.toInterface()
	if ni.Iface == "" {
		ni.Iface = iface
	}
	return &ni, nil
}

// NetworkInterfaceRequest holds the fields to create or update an interface.
// Nil pointers are left out of the request.
type NetworkInterfaceRequest struct {
	Type string // required by PVE on create and update

	CIDR, Gateway, CIDR6, Gateway6 *string
	MTU                            *int64
	Autostart                      *bool
	Comments                       *string

	BridgePorts     *[]string
	BridgeVLANAware *bool
	BridgeVIDs      *string

	Slaves                                    *[]string
	BondMode, BondXmitHashPolicy, BondPrimary *string

	VLANID        *int64
	VLANRawDevice *string

	// Delete lists PVE parameter names to remove (update only), e.g. "mtu",
	// "cidr" (which also removes address and netmask).
	Delete []string
}

// params encodes the request. On update, a field set to its empty value
// ("" string, empty list) is removed with delete= instead of being sent
// empty, which PVE would reject as an invalid format; on create it is simply
// left out.
//
// bridge_vlan_aware is special: PVE renders "bridge-vlan-aware yes" whenever
// the key is defined, even as 0, so false is sent as delete=bridge_vlan_aware
// on update and omitted on create.
func (r NetworkInterfaceRequest) params(update bool) Params {
	p := Params{}
	var del []string
	if r.Type != "" {
		p.Set("type", r.Type)
	}
	str := func(key string, v *string) {
		if v == nil {
			return
		}
		if *v == "" {
			if update {
				del = append(del, key)
			}
			return
		}
		p.Set(key, *v)
	}
	list := func(key string, v *[]string) {
		if v == nil {
			return
		}
		if len(*v) == 0 {
			if update {
				del = append(del, key)
			}
			return
		}
		p.Set(key, strings.Join(*v, " "))
	}
	str("cidr", r.CIDR)
	str("gateway", r.Gateway)
	str("cidr6", r.CIDR6)
	str("gateway6", r.Gateway6)
	if r.MTU != nil {
		p.SetInt("mtu", *r.MTU)
	}
	if r.Autostart != nil {
		p.SetBool("autostart", *r.Autostart)
	}
	str("comments", r.Comments)
	list("bridge_ports", r.BridgePorts)
	if r.BridgeVLANAware != nil {
		if *r.BridgeVLANAware {
			p.SetBool("bridge_vlan_aware", true)
		} else if update {
			del = append(del, "bridge_vlan_aware")
		}
	}
	str("bridge_vids", r.BridgeVIDs)
	list("slaves", r.Slaves)
	str("bond_mode", r.BondMode)
	str("bond_xmit_hash_policy", r.BondXmitHashPolicy)
	str("bond-primary", r.BondPrimary)
	if r.VLANID != nil {
		p.SetInt("vlan-id", *r.VLANID)
	}
	str("vlan-raw-device", r.VLANRawDevice)
	if update {
		del = append(del, r.Delete...)
		// Do not delete what this request sets.
		keep := del[:0]
		for _, k := range del {
			if _, set := p[k]; !set {
				keep = append(keep, k)
			}
		}
		p.Delete(keep...)
	}
	return p
}

// CreateNetworkInterface stages a new interface (synchronous; PVE answers
// null).
//
//pve:operation POST /nodes/{node}/network
func (c *Client) CreateNetworkInterface(ctx context.Context, node, iface string, r NetworkInterfaceRequest) error {
	p := r.params(false)
	p.Set("iface", iface)
	return c.Post(ctx, networkPath(node), p, nil)
}

// UpdateNetworkInterface stages changes to an interface. PVE requires type
// on update too.
//
//pve:operation PUT /nodes/{node}/network/{iface}
func (c *Client) UpdateNetworkInterface(ctx context.Context, node, iface string, r NetworkInterfaceRequest) error {
	if r.Type == "" {
		return fmt.Errorf("updating network interface %s on node %s: type is required by PVE", iface, node)
	}
	return c.Put(ctx, ifacePath(node, iface), r.params(true), nil)
}

// DeleteNetworkInterface stages the removal of an interface.
//
//pve:operation DELETE /nodes/{node}/network/{iface}
func (c *Client) DeleteNetworkInterface(ctx context.Context, node, iface string) error {
	return c.Delete(ctx, ifacePath(node, iface), nil, nil)
}

// ApplyNetwork activates the staged configuration (interfaces.new is renamed
// over interfaces and `ifreload -a` runs) and returns the task UPID
// (type srvreload, id networking); wait for it with WaitTask.
//
//pve:operation PUT /nodes/{node}/network
func (c *Client) ApplyNetwork(ctx context.Context, node string) (string, error) {
	var upid string
	if err := c.Put(ctx, networkPath(node), nil, &upid); err != nil {
		return "", err
	}
	if upid == "" {
		return "", fmt.Errorf("PVE API PUT %s: no task id in the answer", networkPath(node))
	}
	return upid, nil
}

// RevertNetwork discards all staged changes (deletes interfaces.new).
//
//pve:operation DELETE /nodes/{node}/network
func (c *Client) RevertNetwork(ctx context.Context, node string) error {
	return c.Delete(ctx, networkPath(node), nil, nil)
}
