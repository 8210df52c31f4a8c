package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Rendering of /etc/network/interfaces and the writer-side consistency
// checks, after pve-common PVE::Network::Interfaces
// (__write_etc_network_interfaces, __interface_to_string).

var vlanDotRE = regexp.MustCompile(`^(\S+)\.(\d+)$`)
var vlanNumRE = regexp.MustCompile(`^vlan(\d+)$`)

// typePrio orders stanzas as the writer's $if_type_hash does.
var typePrio = map[string]int{"eth": 200000, "alias": 200000, "bond": 400000, "bridge": 500000, "vlan": 600000}

func (cfg *netConfig) sortPrio(name string) int {
	root := name
	level := 0
	if i := strings.IndexAny(name, ".:"); i > 0 {
		root = name[:i]
		level = len(strings.FieldsFunc(name[i:], func(r rune) bool { return r == '.' || r == ':' }))
	}
	typ := "eth"
	if ri := cfg.Ifaces[root]; ri != nil {
		typ = ri.Type
	} else if ni := cfg.Ifaces[name]; ni != nil && root == name {
		typ = ni.Type
	}
	p, ok := typePrio[typ]
	if !ok {
		p = 700000
	}
	return p + level
}

// order returns interface names in the writer's order.
func (cfg *netConfig) order() []string {
	names := make([]string, 0, len(cfg.Ifaces))
	for n := range cfg.Ifaces {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		pa, pb := cfg.sortPrio(names[a]), cfg.sortPrio(names[b])
		if pa != pb {
			return pa < pb
		}
		qa, qb := cfg.Ifaces[names[a]].Priority, cfg.Ifaces[names[b]].Priority
		if qa == 0 {
			qa = 50000
		}
		if qb == 0 {
			qb = 50000
		}
		if qa != qb {
			return qa < qb
		}
		return names[a] < names[b]
	})
	return names
}

// renumber stores each stanza's position, as re-reading the file would.
func (cfg *netConfig) renumber() {
	for i, n := range cfg.order() {
		cfg.Ifaces[n].Priority = i + 3 // the reader counts from 2, and lo is the first stanza
	}
}

// render produces the interfaces file text.
func (cfg *netConfig) render() string {
	var b strings.Builder
	b.WriteString("auto lo\niface lo inet loopback\n\n")
	for _, n := range cfg.order() {
		d := cfg.Ifaces[n]
		if d.Autostart {
			fmt.Fprintf(&b, "auto %s\n", n)
		}
		for i, fam := range d.families() {
			b.WriteString(d.stanza(fam, i == 0))
		}
		b.WriteString("\n")
	}
	for _, o := range cfg.Options {
		b.WriteString(o + "\n")
	}
	return b.String()
}

func (d *netIface) families() []string {
	if d.Families != nil {
		return d.Families
	}
	var f []string
	if d.Address != "" || d.Address6 == "" {
		f = append(f, "inet")
	}
	if d.Address6 != "" {
		f = append(f, "inet6")
	}
	return f
}

func (d *netIface) stanza(family string, first bool) string {
	var b strings.Builder
	addr, mask, gw, comments := d.Address, d.Netmask, d.Gateway, d.Comments
	if family == "inet6" {
		addr, mask, gw, comments = d.Address6, d.Netmask6, d.Gateway6, d.Comments6
	}
	fmt.Fprintf(&b, "iface %s %s %s\n", d.Name, family, d.method(family))
	if addr != "" {
		if mask != "" {
			addr += "/" + mask
		}
		fmt.Fprintf(&b, "\taddress %s\n", addr)
	}
	if gw != "" {
		fmt.Fprintf(&b, "\tgateway %s\n", gw)
	}
	if first {
		switch d.Type {
		case "bridge":
			ports := d.BridgePorts
			if ports == "" {
				ports = "none"
			}
			fmt.Fprintf(&b, "\tbridge-ports %s\n\tbridge-stp off\n\tbridge-fd 0\n", ports)
			// Only definedness is tested, so bridge_vlan_aware=0 renders yes.
			if d.BridgeVlanAware != nil {
				vids := "2-4094"
				if d.BridgeVids != nil {
					vids = *d.BridgeVids
				}
				fmt.Fprintf(&b, "\tbridge-vlan-aware yes\n\tbridge-vids %s\n", vids)
			}
			if d.MTU > 0 {
				fmt.Fprintf(&b, "\tmtu %d\n", d.MTU)
			}
		case "bond":
			slaves := d.Slaves
			if slaves == "" {
				slaves = "none"
			}
			fmt.Fprintf(&b, "\tbond-slaves %s\n\tbond-miimon 100\n\tbond-mode %s\n", slaves, d.bondMode())
			if d.BondXmitHashPolicy != "" && (d.BondMode == "balance-xor" || d.BondMode == "802.3ad") {
				fmt.Fprintf(&b, "\tbond-xmit-hash-policy %s\n", d.BondXmitHashPolicy)
			}
			if d.BondPrimary != "" && d.BondMode == "active-backup" {
				fmt.Fprintf(&b, "\tbond-primary %s\n", d.BondPrimary)
			}
			if d.MTU > 0 {
				fmt.Fprintf(&b, "\tmtu %d\n", d.MTU)
			}
		default:
			// Remaining options are printed sorted by key.
			if d.MTU > 0 {
				fmt.Fprintf(&b, "\tmtu %d\n", d.MTU)
			}
			if d.VlanID > 0 {
				fmt.Fprintf(&b, "\tvlan-id %d\n", d.VlanID)
			}
			if d.VlanRawDevice != "" {
				fmt.Fprintf(&b, "\tvlan-raw-device %s\n", d.VlanRawDevice)
			}
		}
	}
	for _, l := range strings.Split(strings.TrimRight(comments, "\n"), "\n") {
		if comments != "" {
			fmt.Fprintf(&b, "#%s\n", l)
		}
	}
	return b.String()
}

// method is the stanza's method: what the last update set, else static
// for a family with an address.
func (d *netIface) method(family string) string {
	m, addr := d.Method, d.Address
	if family == "inet6" {
		m, addr = d.Method6, d.Address6
	}
	switch {
	case m != "":
		return m
	case addr != "":
		return "static"
	}
	return "manual"
}

func (d *netIface) bondMode() string {
	if d.BondMode == "" {
		return "balance-rr"
	}
	return d.BondMode
}

// checkMTU is the writer's $check_mtu.
func checkMTU(ifaces map[string]*netIface, parent, child string) *apiError {
	c := ifaces[child]
	if c == nil || c.MTU == 0 {
		return nil
	}
	p := ifaces[parent]
	pmtu := 0
	if p != nil {
		pmtu = p.MTU
		if p.Type == "bond" && pmtu == 0 {
			pmtu = c.MTU
		}
	}
	if pmtu == 0 {
		pmtu = 1500
	}
	if pmtu < c.MTU {
		return die("interface '%s' - mtu %d is lower than '%s' - mtu %d", parent, pmtu, child, c.MTU)
	}
	return nil
}

// writerCheck runs the writer's validations over the whole resulting
// config and applies its normalisations (slave autostart, vlan options).
// Failures are plain dies: 500, and the file is not written.
func (cfg *netConfig) writerCheck() *apiError {
	ifaces := cfg.Ifaces
	names := make([]string, 0, len(ifaces))
	for n := range ifaces {
		names = append(names, n)
	}
	sort.Strings(names)

	used := map[string]string{}
	for _, n := range names {
		d := ifaces[n]
		if d.Type != "bond" || d.Slaves == "" {
			continue
		}
		primaryIsSlave := false
		for _, p := range splitList(d.Slaves) {
			s := ifaces[p]
			if s == nil {
				return die("bond '%s' - unable to find slave '%s'", n, p)
			}
			s.Autostart = true
			if d.BondPrimary != "" && d.BondPrimary == p {
				primaryIsSlave = true
			}
			if s.Type != "eth" && s.Type != "bond" {
				return die("bond '%s' - wrong interface type on slave '%s' ('%s' != 'eth or bond')", n, p, s.Type)
			}
			if err := checkMTU(ifaces, n, p); err != nil {
				return err
			}
			if other, ok := used[p]; ok {
				return die("port '%s' is already used on interface '%s'", p, other)
			}
			used[p] = n
		}
		if d.BondPrimary != "" && !primaryIsSlave {
			return die("bond '%s' - bond-primary interface is not a slave", n)
		}
	}

	for _, n := range names {
		d := ifaces[n]
		if d.Type != "vlan" {
			continue
		}
		var parent string
		var vid int
		if m := vlanDotRE.FindStringSubmatch(n); m != nil {
			parent = m[1]
			vid, _ = strconv.Atoi(m[2])
			d.VlanRawDevice = ""
		} else {
			if d.VlanRawDevice == "" {
				return die("missing vlan-raw-device option")
			}
			parent = d.VlanRawDevice
			if m := vlanNumRE.FindStringSubmatch(n); m != nil {
				vid, _ = strconv.Atoi(m[1])
				d.VlanID = 0
			} else {
				if d.VlanID == 0 {
					return die("missing vlan-id option")
				}
				vid = d.VlanID
			}
		}
		if vid > 4094 {
			return die("vlan '%s' - vlan-id %d should be <= 4094", n, vid)
		}
		p := ifaces[parent]
		if p == nil {
			return die("vlan '%s' - unable to find parent '%s'", n, parent)
		}
		switch p.Type {
		case "eth", "bridge", "bond", "vlan":
		default:
			return die("vlan '%s' - wrong interface type on parent '%s' ('%s' != 'eth|bond|bridge|vlan' )", n, parent, p.Type)
		}
		if err := checkMTU(ifaces, parent, n); err != nil {
			return err
		}
	}

	bridged := map[string]string{}
	for _, n := range names {
		d := ifaces[n]
		if d.Type != "bridge" {
			continue
		}
		for _, p := range splitList(d.BridgePorts) {
			port := ifaces[p]
			if port == nil && vlanDotRE.MatchString(p) {
				// The writer treats an undeclared dotted port as a manual vlan.
				continue
			}
			if port == nil {
				return die("bridge '%s' - unable to find bridge port '%s'", n, p)
			}
			if port.Address != "" && port.Address != "0.0.0.0" || port.Address6 != "" && port.Address6 != "::" {
				return die("iface %s - ip address can't be set on interface if bridged in %s", p, n)
			}
			if err := checkMTU(ifaces, p, n); err != nil {
				return err
			}
			if other, ok := bridged[p]; ok {
				return die("port '%s' is already used on interface '%s'", p, other)
			}
			bridged[p] = n
		}
	}
	return nil
}

// unifiedDiff is a small `diff -u` of two texts (3 lines of context).
func unifiedDiff(oldName, newName, a, b string) string {
	if a == b {
		return ""
	}
	x := strings.SplitAfter(a, "\n")
	y := strings.SplitAfter(b, "\n")
	if x[len(x)-1] == "" {
		x = x[:len(x)-1]
	}
	if y[len(y)-1] == "" {
		y = y[:len(y)-1]
	}
	// LCS table.
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		line string
		ai   int // index in a before this op
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', y[j], i, j})
			j++
		}
	}
	const ctx = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(k-ctx, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		var body strings.Builder
		ac, bc := 0, 0
		for _, o := range ops[start:end] {
			line := o.line
			if !strings.HasSuffix(line, "\n") {
				line += "\n\\ No newline at end of file\n"
			}
			body.WriteByte(o.kind)
			body.WriteString(line)
			if o.kind != '+' {
				ac++
			}
			if o.kind != '-' {
				bc++
			}
		}
		as, bs := ops[start].ai+1, ops[start].bi+1
		if ac == 0 {
			as--
		}
		if bc == 0 {
			bs--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", as, ac, bs, bc)
		out.WriteString(body.String())
		k = end
	}
	return out.String()
}
