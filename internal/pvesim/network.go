package pvesim

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Node network after pve-manager PVE::API2::Network: create/update/delete
// only write the staged file (interfaces.new), apply renames it over
// interfaces in a srvreload task, revert deletes it.

type netIface struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Autostart bool   `json:"autostart,omitempty"`
	Priority  int    `json:"priority,omitempty"`

	Address   string `json:"address,omitempty"`
	Netmask   string `json:"netmask,omitempty"` // prefix length
	Gateway   string `json:"gateway,omitempty"`
	Address6  string `json:"address6,omitempty"`
	Netmask6  string `json:"netmask6,omitempty"`
	Gateway6  string `json:"gateway6,omitempty"`
	MTU       int    `json:"mtu,omitempty"`
	Comments  string `json:"comments,omitempty"`
	Comments6 string `json:"comments6,omitempty"`

	BridgePorts     string  `json:"bridge_ports,omitempty"`
	BridgeVlanAware *int    `json:"bridge_vlan_aware,omitempty"` // defined-ness is what counts
	BridgeVids      *string `json:"bridge_vids,omitempty"`

	Slaves             string `json:"slaves,omitempty"`
	BondMode           string `json:"bond_mode,omitempty"`
	BondXmitHashPolicy string `json:"bond_xmit_hash_policy,omitempty"`
	BondPrimary        string `json:"bond_primary,omitempty"`

	VlanID        int    `json:"vlan_id,omitempty"`
	VlanRawDevice string `json:"vlan_raw_device,omitempty"`

	// Families and the methods as the last update set them: Network.pm
	// derives them from that request's address/address6 alone (nil/""
	// until an update: derived from the addresses, as create does).
	Families []string `json:"families,omitempty"`
	Method   string   `json:"method,omitempty"`
	Method6  string   `json:"method6,omitempty"`
}

type netConfig struct {
	Ifaces map[string]*netIface `json:"ifaces"`
	// Options are the file's other lines (source, source-directory), kept
	// and written after the stanzas (network_parse.go).
	Options []string `json:"options,omitempty"`
	// Text is the file's bytes when it was written by hand (over SSH,
	// Hand set) rather than by PVE's writer (render, network_parse.go).
	Text string `json:"text,omitempty"`
	Hand bool   `json:"hand_written,omitempty"`
}

func newNetConfig() *netConfig { return &netConfig{Ifaces: map[string]*netIface{}} }

func (cfg *netConfig) fixup() {
	if cfg.Ifaces == nil {
		cfg.Ifaces = map[string]*netIface{}
	}
	for n, i := range cfg.Ifaces {
		i.Name = n
	}
}

// defaultNetConfig is a fresh install: every NIC in manual mode, no auto.
func defaultNetConfig() *netConfig {
	cfg := newNetConfig()
	for _, n := range physicalNICs {
		cfg.Ifaces[n] = &netIface{Name: n, Type: "eth"}
	}
	cfg.renumber()
	return cfg
}

func (cfg *netConfig) clone() *netConfig {
	out := newNetConfig()
	out.Options = slices.Clone(cfg.Options) // Text is not kept: PVE's writer rewrites the file
	for n, i := range cfg.Ifaces {
		c := *i
		c.Families = slices.Clone(i.Families) // nil stays nil: derived, not set
		if i.BridgeVlanAware != nil {
			v := *i.BridgeVlanAware
			c.BridgeVlanAware = &v
		}
		if i.BridgeVids != nil {
			v := *i.BridgeVids
			c.BridgeVids = &v
		}
		out.Ifaces[n] = &c
	}
	return out
}

// current is what read_file('interfaces') sees: the staged file if any,
// else the applied one.
func (ns *nodeState) current() *netConfig {
	if ns.Staged != nil {
		return ns.Staged
	}
	return ns.Applied
}

// readView adds NICs present in /proc/net/dev but absent from the file,
// as bare manual eth interfaces; the writer then writes them back.
func (ns *nodeState) readView() *netConfig {
	cfg := ns.current().clone()
	for _, p := range ns.Physical {
		if cfg.Ifaces[p] == nil {
			cfg.Ifaces[p] = &netIface{Name: p, Type: "eth", Priority: 100000}
		}
	}
	return cfg
}

func (ns *nodeState) isPhysical(name string) bool { return contains(ns.Physical, name) }

// writeStaged runs the writer checks and stores cfg as interfaces.new.
func (s *Sim) writeStaged(ns *nodeState, cfg *netConfig) *apiError {
	if err := cfg.writerCheck(); err != nil {
		return err
	}
	cfg.renumber()
	// Re-reading the file loses what no stanza carries: the addresses,
	// gateway and comments of a family the interface no longer lists.
	for _, d := range cfg.Ifaces {
		fams := d.families()
		if !contains(fams, "inet") {
			d.Address, d.Netmask, d.Gateway, d.Comments = "", "", "", ""
		}
		if !contains(fams, "inet6") {
			d.Address6, d.Netmask6, d.Gateway6, d.Comments6 = "", "", "", ""
		}
	}
	ns.Staged = cfg
	s.saveLocked()
	return nil
}

// computeActive marks what ifreload brings up: auto interfaces and,
// transitively, their slaves, ports and vlan parents.
func (ns *nodeState) computeActive() {
	cfg := ns.live()
	active := map[string]bool{}
	var up func(n string)
	up = func(n string) {
		d := cfg.Ifaces[n]
		if d == nil || active[n] {
			return
		}
		active[n] = true
		for _, p := range splitList(d.Slaves + " " + d.BridgePorts) {
			up(p)
		}
		if d.Type == "vlan" {
			if m := vlanDotRE.FindStringSubmatch(n); m != nil {
				up(m[1])
			} else {
				up(d.VlanRawDevice)
			}
		}
	}
	for n, d := range cfg.Ifaces {
		if d.Autostart {
			up(n)
		}
	}
	ns.Active = nil
	for n := range active {
		ns.Active = append(ns.Active, n)
	}
}

// apiIface is one interface as GET returns it after re-reading the file.
func (ns *nodeState) apiIface(d *netIface) map[string]any {
	m := map[string]any{
		"iface": d.Name, "type": d.Type, "priority": d.Priority,
		"families": d.families(), "method": "manual", "method6": "manual",
	}
	if ns.current().Ifaces[d.Name] == nil {
		delete(m, "priority") // a NIC the file does not mention has only "exists"
	}
	if d.Autostart {
		m["autostart"] = 1
	}
	if contains(ns.Active, d.Name) {
		m["active"] = 1
	}
	if ex, ok := ns.exists(d); ok {
		m["exists"] = ex
	}
	// The reader maps address/netmask to cidr, falling back to a host
	// prefix when the file has no mask.
	m["method"], m["method6"] = d.method("inet"), d.method("inet6")
	if d.Address != "" {
		m["address"] = d.Address
		m["cidr"] = d.Address + "/32"
		if d.Netmask != "" {
			m["netmask"] = d.Netmask
			m["cidr"] = d.Address + "/" + d.Netmask
		}
	}
	if d.Gateway != "" {
		m["gateway"] = d.Gateway
	}
	if d.Address6 != "" {
		m["address6"] = d.Address6
		m["cidr6"] = d.Address6 + "/128"
		if d.Netmask6 != "" {
			m["netmask6"] = d.Netmask6
			m["cidr6"] = d.Address6 + "/" + d.Netmask6
		}
	}
	if d.Gateway6 != "" {
		m["gateway6"] = d.Gateway6
	}
	// Simple options come back as the text of the file.
	if d.MTU > 0 {
		m["mtu"] = strconv.Itoa(d.MTU)
	}
	// The reader appends the inet6 stanza's comments to comments and drops
	// comments6; each stanza only carries its own family's comments.
	var comments string
	for _, fam := range d.families() {
		c := d.Comments
		if fam == "inet6" {
			c = d.Comments6
		}
		if c != "" {
			comments += strings.TrimRight(c, "\n") + "\n"
		}
	}
	if comments != "" {
		m["comments"] = comments
	}
	switch d.Type {
	case "bridge":
		if d.BridgePorts != "" {
			m["bridge_ports"] = d.BridgePorts
		}
		m["bridge_stp"] = "off"
		m["bridge_fd"] = "0"
		if d.BridgeVlanAware != nil {
			m["bridge_vlan_aware"] = 1
			m["bridge_vids"] = "2-4094"
			if d.BridgeVids != nil {
				m["bridge_vids"] = *d.BridgeVids
			}
		}
	case "bond":
		if d.Slaves != "" {
			m["slaves"] = d.Slaves
		}
		m["bond_miimon"] = "100"
		m["bond_mode"] = d.bondMode()
		if d.BondXmitHashPolicy != "" && (d.BondMode == "balance-xor" || d.BondMode == "802.3ad") {
			m["bond_xmit_hash_policy"] = d.BondXmitHashPolicy
		}
		if d.BondPrimary != "" && d.BondMode == "active-backup" {
			m["bond-primary"] = d.BondPrimary
		}
	case "vlan":
		if mm := vlanDotRE.FindStringSubmatch(d.Name); mm != nil {
			m["vlan-raw-device"], m["vlan-id"] = mm[1], mm[2]
			if d.VlanRawDevice != "" {
				m["vlan-raw-device"] = d.VlanRawDevice
			}
		} else {
			if d.VlanRawDevice != "" {
				m["vlan-raw-device"] = d.VlanRawDevice
			}
			if mm := vlanNumRE.FindStringSubmatch(d.Name); mm != nil {
				m["vlan-id"] = mm[1]
			} else if d.VlanID > 0 {
				m["vlan-id"] = strconv.Itoa(d.VlanID)
			}
		}
	}
	return m
}

// exists is the reader's "exists": 1 for a NIC the kernel has; an alias or
// vlan inherits its parent's value (absent for a parent that is no NIC, 0
// for a parent missing from the file).
func (ns *nodeState) exists(d *netIface) (int, bool) {
	parent := ""
	alias := aliasRE.FindStringSubmatch(d.Name)
	switch {
	case d.Type == "bond" || d.Type == "bridge":
	case alias != nil:
		parent = alias[1]
	case d.Type == "vlan":
		if mm := vlanDotRE.FindStringSubmatch(d.Name); mm != nil {
			parent = mm[1]
		}
		if d.VlanRawDevice != "" {
			parent = d.VlanRawDevice
		}
	}
	if parent == "" {
		if ns.isPhysical(d.Name) {
			return 1, true
		}
		return 0, false
	}
	switch {
	case ns.isPhysical(parent):
		return 1, true
	case ns.current().Ifaces[parent] == nil:
		return 0, true
	}
	return 0, false
}

var aliasRE = regexp.MustCompile(`^(\S+):\d+$`)

// netTypes are the interface types of a release; PVE 9 added fabric.
func netTypes(rel pveRelease) []string {
	if rel.atLeast9() {
		return []string{"bridge", "bond", "eth", "alias", "vlan", "fabric", "OVSBridge", "OVSBond", "OVSPort", "OVSIntPort", "vnet", "unknown"}
	}
	return []string{"bridge", "bond", "eth", "alias", "vlan", "OVSBridge", "OVSBond", "OVSPort", "OVSIntPort", "vnet", "unknown"}
}

func ifaceSchema(rel pveRelease, update bool) schema {
	sc := schema{
		"node":                  nodeParam(),
		"iface":                 func() param { p := pFmt("pve-iface").req().maxLen(20); p.minLength = 2; return p }(),
		"type":                  pEnum(netTypes(rel)...).req(),
		"address":               pFmt("ipv4").needs("netmask"),
		"address6":              pFmt("ipv6").needs("netmask6"),
		"autostart":             pBool(),
		"bond-primary":          pFmt("pve-iface"),
		"bond_mode":             pEnum("balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb", "balance-slb", "lacp-balance-slb", "lacp-balance-tcp"),
		"bond_xmit_hash_policy": pEnum("layer2", "layer2+3", "layer3+4"),
		"bridge_ports":          pFmt("pve-iface-list"),
		"bridge_vids":           pFmt("pve-vlan-id-or-range-list"),
		"bridge_vlan_aware":     pBool(),
		"cidr":                  pFmt("CIDRv4"),
		"cidr6":                 pFmt("CIDRv6"),
		"comments":              pStr(),
		"comments6":             pStr(),
		"gateway":               pFmt("ipv4"),
		"gateway6":              pFmt("ipv6"),
		"mtu":                   pInt(i64(1280), i64(65520)),
		"netmask":               pFmt("ipv4mask").needs("address"),
		"netmask6":              pInt(i64(0), i64(128)).needs("address6"),
		"ovs_bonds":             pFmt("pve-iface-list"),
		"ovs_bridge":            pFmt("pve-iface"),
		"ovs_options":           pStr().maxLen(1024),
		"ovs_ports":             pFmt("pve-iface-list"),
		"ovs_tag":               pInt(i64(1), i64(4094)),
		"slaves":                pFmt("pve-iface-list"),
		"vlan-id":               pInt(i64(1), i64(4094)),
		"vlan-raw-device":       pFmt("pve-iface"),
	}
	if update {
		sc["delete"] = pFmt("pve-configid-list")
	}
	return sc
}

func registerNetwork(t *routeTable) {
	types := netTypes(t.rel)
	filters := append(append([]string{}, types[:len(types)-1]...), "any_bridge", "any_local_bridge")
	apply := schema{"node": nodeParam()}
	if t.rel.atLeast9() {
		filters = append(filters, "include_sdn")
		apply["regenerate-frr"] = pBool()
	}
	t.add("GET", "/nodes/{node}/network", &method{params: schema{"node": nodeParam(), "type": pEnum(filters...)}, handler: listNetwork})
	t.add("POST", "/nodes/{node}/network", &method{params: ifaceSchema(t.rel, false), handler: createNetwork})
	t.add("PUT", "/nodes/{node}/network", &method{params: apply, handler: applyNetwork})
	t.add("DELETE", "/nodes/{node}/network", &method{params: schema{"node": nodeParam()}, handler: func(c *call) (any, *apiError) {
		c.node().Staged = nil
		c.s.saveLocked()
		return nil, nil
	}})
	ifaceOnly := schema{"node": nodeParam(), "iface": func() param { p := pFmt("pve-iface").req().maxLen(20); p.minLength = 2; return p }()}
	t.add("GET", "/nodes/{node}/network/{iface}", &method{params: ifaceOnly, handler: func(c *call) (any, *apiError) {
		ns := c.node()
		if c.params["iface"] == "lo" {
			// The writer always puts lo first; only the listing hides it.
			return map[string]any{"iface": "lo", "type": "loopback", "method": "loopback", "method6": "manual",
				"autostart": 1, "active": 1, "priority": 2, "families": []string{"inet"}}, nil
		}
		d := ns.readView().Ifaces[c.params["iface"]]
		if d == nil {
			return nil, paramErr1("iface", "interface does not exist")
		}
		return ns.apiIface(d), nil
	}})
	t.add("PUT", "/nodes/{node}/network/{iface}", &method{params: ifaceSchema(t.rel, true), handler: updateNetwork})
	t.add("DELETE", "/nodes/{node}/network/{iface}", &method{params: ifaceOnly, handler: func(c *call) (any, *apiError) {
		ns := c.node()
		cfg := ns.readView()
		if cfg.Ifaces[c.params["iface"]] == nil {
			return nil, paramErr1("iface", "interface does not exist")
		}
		delete(cfg.Ifaces, c.params["iface"])
		return nil, c.s.writeStaged(ns, cfg)
	}})
}

func listNetwork(c *call) (any, *apiError) {
	ns := c.node()
	cfg := ns.readView()
	filter := c.params["type"]
	out := []map[string]any{}
	for _, n := range cfg.order() {
		d := cfg.Ifaces[n]
		switch filter {
		case "", "include_sdn":
		case "any_bridge", "any_local_bridge":
			if d.Type != "bridge" && d.Type != "OVSBridge" {
				continue
			}
		default:
			if d.Type != filter {
				continue
			}
		}
		out = append(out, ns.apiIface(d))
	}
	if ns.Staged != nil {
		if diff := unifiedDiff("/etc/network/interfaces", "/etc/network/interfaces.new", ns.Applied.fileText(), ns.Staged.fileText()); diff != "" {
			c.setExtra("changes", diff)
		}
	}
	return out, nil
}

func applyNetwork(c *call) (any, *apiError) {
	ns := c.node()
	// The worker renames interfaces.new over interfaces first and only then
	// runs ifreload, so a failed reload still leaves the new configuration
	// in place (used at next boot) with nothing staged.
	if ns.Staged != nil {
		ns.keepLive()
		ns.Applied = ns.Staged
		ns.Staged = nil
	}
	// The task runs on the node even when the reload cuts the node off:
	// it finishes there, only clients no longer see it.
	upid := c.s.startTaskLocked(c, "srvreload", "networking", func(t *task) (int, error) {
		c.s.reloadNetworkLocked(ns)
		return 0, nil
	})
	return upid, nil
}

// mapCIDR splits cidr/cidr6 into address and netmask; the first conflict
// found is raised alone, in Network.pm's order.
func mapCIDR(p map[string]string) *apiError {
	for _, suf := range []string{"", "6"} {
		cidr, ok := p["cidr"+suf]
		if !ok || cidr == "" {
			continue
		}
		if p["address"+suf] != "" {
			return paramErr1("address"+suf, "address"+suf+" conflicts with cidr"+suf)
		}
		if p["netmask"+suf] != "" {
			return paramErr1("netmask"+suf, "netmask"+suf+" conflicts with cidr"+suf)
		}
		addr, mask, _ := strings.Cut(cidr, "/")
		p["address"+suf], p["netmask"+suf] = addr, mask
		delete(p, "cidr"+suf)
	}
	return nil
}

func checkGateways(cfg *netConfig, iface string, p map[string]string) *apiError {
	for _, n := range cfg.order() {
		if n == iface {
			continue
		}
		if p["gateway"] != "" && cfg.Ifaces[n].Gateway != "" {
			return paramErr1("gateway", "Default gateway already exists on interface '"+n+"'.")
		}
		if p["gateway6"] != "" && cfg.Ifaces[n].Gateway6 != "" {
			return paramErr1("gateway6", "Default ipv6 gateway already exists on interface '"+n+"'.")
		}
	}
	return nil
}

// checkPorts is Network.pm's $check_duplicate_ports: the error is filed
// under the request's first port parameter (bridge_ports, ovs_ports,
// slaves, ovs_bonds), whatever the other interface calls its ports.
func checkPorts(cfg *netConfig, iface string, p map[string]string) *apiError {
	newPorts := map[string]bool{}
	key := ""
	for _, k := range []string{"bridge_ports", "ovs_ports", "slaves", "ovs_bonds"} {
		if p[k] == "" {
			continue
		}
		if key == "" {
			key = k
		}
		for _, port := range splitList(p[k]) {
			newPorts[port] = true
		}
	}
	if len(newPorts) == 0 {
		return nil
	}
	for _, n := range cfg.order() {
		if n == iface {
			continue
		}
		d := cfg.Ifaces[n]
		for _, port := range splitList(d.BridgePorts + " " + d.Slaves) {
			if newPorts[port] {
				return paramErr1(key, port+" is already used on interface '"+n+"'.")
			}
		}
	}
	return nil
}

func unsupportedType(typ string) *apiError {
	if strings.HasPrefix(typ, "OVS") {
		return die("Open VSwitch is not installed (need package 'openvswitch-switch')")
	}
	switch typ {
	case "fabric", "vnet", "unknown":
		return die("pvesim: interface type '%s' is not supported", typ)
	}
	return nil
}

// applyParams stores the request's interface properties on d.
func applyParams(d *netIface, p map[string]string) *apiError {
	for k, v := range p {
		switch k {
		case "type":
			d.Type = v
		case "autostart":
			d.Autostart = v == "1"
		case "address":
			d.Address = v
		case "netmask":
			if bits, ok := maskBits(v); ok {
				v = strconv.Itoa(bits)
			}
			d.Netmask = v
		case "gateway":
			d.Gateway = v
		case "address6":
			d.Address6 = v
		case "netmask6":
			d.Netmask6 = v
		case "gateway6":
			d.Gateway6 = v
		case "mtu":
			d.MTU, _ = strconv.Atoi(v)
		case "comments":
			d.Comments = v
		case "comments6":
			d.Comments6 = v
		case "bridge_ports":
			d.BridgePorts = strings.Join(splitList(v), " ")
		case "bridge_vlan_aware":
			n, _ := strconv.Atoi(v)
			d.BridgeVlanAware = &n
		case "bridge_vids":
			items := splitList(v)
			if len(items) == 0 {
				return paramErr1("bridge_vids", "VLAN list items are empty")
			}
			s := strings.Join(items, " ")
			d.BridgeVids = &s
		case "slaves":
			d.Slaves = strings.Join(splitList(v), " ")
		case "bond_mode":
			d.BondMode = v
		case "bond_xmit_hash_policy":
			d.BondXmitHashPolicy = v
		case "bond-primary":
			d.BondPrimary = v
		case "vlan-id":
			d.VlanID, _ = strconv.Atoi(v)
		case "vlan-raw-device":
			d.VlanRawDevice = v
		}
	}
	return nil
}

func clearParam(d *netIface, k string) {
	switch k {
	case "autostart":
		d.Autostart = false
	case "address":
		d.Address = ""
	case "netmask":
		d.Netmask = ""
	case "cidr":
		d.Address, d.Netmask = "", ""
	case "gateway":
		d.Gateway = ""
	case "address6":
		d.Address6 = ""
	case "netmask6":
		d.Netmask6 = ""
	case "cidr6":
		d.Address6, d.Netmask6 = "", ""
	case "gateway6":
		d.Gateway6 = ""
	case "mtu":
		d.MTU = 0
	case "comments":
		d.Comments = ""
	case "comments6":
		d.Comments6 = ""
	case "bridge_ports":
		d.BridgePorts = ""
	case "bridge_vlan_aware":
		d.BridgeVlanAware = nil
	case "bridge_vids":
		d.BridgeVids = nil
	case "slaves":
		d.Slaves = ""
	case "bond_mode":
		d.BondMode = ""
	case "bond_xmit_hash_policy":
		d.BondXmitHashPolicy = ""
	case "bond-primary":
		d.BondPrimary = ""
	case "vlan-id":
		d.VlanID = 0
	case "vlan-raw-device":
		d.VlanRawDevice = ""
	}
}

// ifaceProps returns the request params that are interface properties.
func ifaceProps(c *call) map[string]string {
	p := map[string]string{}
	for k, v := range c.params {
		switch k {
		case "node", "iface", "delete":
		default:
			p[k] = v
		}
	}
	return p
}

func createNetwork(c *call) (any, *apiError) {
	ns := c.node()
	cfg := ns.readView()
	name := c.params["iface"]
	p := ifaceProps(c)
	if cfg.Ifaces[name] != nil {
		return nil, paramErr1("iface", "interface already exists")
	}
	if err := checkGateways(cfg, name, p); err != nil {
		return nil, err
	}
	if err := mapCIDR(p); err != nil {
		return nil, err
	}
	if err := checkPorts(cfg, name, p); err != nil {
		return nil, err
	}
	if err := checkIPv6Settings(p); err != nil {
		return nil, err
	}
	if err := unsupportedType(p["type"]); err != nil {
		return nil, err
	}
	d := &netIface{Name: name}
	if err := applyParams(d, p); err != nil {
		return nil, err
	}
	cfg.Ifaces[name] = d
	return nil, c.s.writeStaged(ns, cfg)
}

func updateNetwork(c *call) (any, *apiError) {
	ns := c.node()
	cfg := ns.readView()
	name := c.params["iface"]
	d := cfg.Ifaces[name]
	if d == nil {
		return nil, paramErr1("iface", "interface does not exist")
	}
	p := ifaceProps(c)
	for _, k := range splitList(c.params["delete"]) {
		clearParam(d, k)
	}
	if err := mapCIDR(p); err != nil {
		return nil, err
	}
	if err := checkGateways(cfg, name, p); err != nil {
		return nil, err
	}
	if err := checkPorts(cfg, name, p); err != nil {
		return nil, err
	}
	if err := checkIPv6Settings(p); err != nil {
		return nil, err
	}
	if err := unsupportedType(p["type"]); err != nil {
		return nil, err
	}
	if err := applyParams(d, p); err != nil {
		return nil, err
	}
	// Network.pm update_network: families and methods come from this
	// request's addresses only; an address it does not repeat stays in the
	// hash but its family's stanza is no longer written.
	d.Families = nil
	if p["address"] != "" {
		d.Families = append(d.Families, "inet")
	}
	if p["address6"] != "" {
		d.Families = append(d.Families, "inet6")
	}
	if len(d.Families) == 0 {
		d.Families = []string{"inet"}
	}
	d.Method, d.Method6 = "manual", "manual"
	if p["address"] != "" {
		d.Method = "static"
	}
	if p["address6"] != "" {
		d.Method6 = "static"
	}
	return nil, c.s.writeStaged(ns, cfg)
}
