package pvesim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Parsing /etc/network/interfaces as PVE's reader (pve-common
// PVE::Network::Interfaces __read_etc_network_interfaces) maps it to
// interfaces, with the syntax errors ifupdown2 reports for it
// (ifupdown2/ifupdown/networkinterfaces.py: process_interfaces,
// parse_iface, _validate_addr_family).
//
// What netIface has no field for is dropped: unknown options inside a
// stanza (PVE keeps them as opaque lines), bridge-stp/bridge-fd and
// bond-miimon (PVE's writer always writes off/0/100). allow-hotplug counts
// as auto, as PVE's reader has it. Lines outside stanzas that are no
// comment (source, source-directory) are kept in Options and written after
// the stanzas.

// physicalNICRE is PVE's $PHYSICAL_NIC_RE.
var physicalNICRE = regexp.MustCompile(`^(?:eth\d+|en[^:.]+|ib[^:.]+)$`)

var bondDigitRE = regexp.MustCompile(`^bond\d+$`)

// bondModeNames maps bond-mode numbers to the names PVE always uses.
var bondModeNames = map[string]string{
	"0": "balance-rr", "1": "active-backup", "2": "balance-xor", "3": "broadcast",
	"4": "802.3ad", "5": "balance-tlb", "6": "balance-alb",
}

// ifupdownMethods are the methods ifupdown2 accepts for inet and inet6.
var ifupdownMethods = []string{"static", "manual", "loopback", "dhcp", "dhcp6", "ppp", "tunnel"}

// parseInterfaces reads an interfaces file. physical are the NICs the
// kernel has (they are eth whatever their name). It always returns the
// configuration it could read; errs are ifupdown2's messages for the
// lines it could not, without the "error: " prefix.
func parseInterfaces(text string, physical []string) (*netConfig, []string) {
	cfg := newNetConfig()
	var errs []string
	errf := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("/etc/network/interfaces: line%d: %s", line, fmt.Sprintf(format, args...)))
	}
	// ifupdown2 joins backslash continuations before splitting lines; the
	// line numbers it reports count the joined lines.
	text = strings.ReplaceAll(text, "\\\n", " ")
	lines := strings.Split(text, "\n")
	auto := map[string]bool{}
	priority := 2 // PVE's reader: 1 is lo's
	var cur *netIface
	var curFamily string
	// PVE's reader ends a stanza at a blank line: comments after one are
	// the file's, not the interface's (options still are ifupdown2's).
	commentsTo := (*netIface)(nil)
	for i, raw := range lines {
		lineno := i + 1
		line := strings.TrimSpace(raw)
		if line == "" {
			commentsTo = nil
			continue
		}
		if strings.HasPrefix(line, "#") {
			if commentsTo != nil {
				c := strings.TrimRightFunc(strings.TrimPrefix(line, "#"), isBlank) + "\n"
				if curFamily == "inet6" {
					commentsTo.Comments6 += c
				} else {
					commentsTo.Comments += c
				}
			}
			continue
		}
		words := strings.Fields(line)
		kw := words[0]
		commentsTo = nil
		switch {
		case kw == "auto" || kw == "allow-auto" || kw == "allow-hotplug" || kw == "allow-ovs":
			cur = nil
			if len(words) < 2 {
				if kw == "auto" {
					errf(lineno, "invalid auto line '%s'", line)
				} else {
					errs = append(errs, fmt.Sprintf("main exception: invalid allow line %s at line %d", line, lineno))
				}
				continue
			}
			for _, n := range words[1:] {
				auto[n] = true
			}
		case strings.HasPrefix(kw, "allow-"):
			cur = nil // another class: not brought up by ifreload -a
		case kw == "source" || kw == "source-directory":
			cur = nil
			if len(words) < 2 {
				errf(lineno, "unable to read %s line", kw)
				continue
			}
			cfg.Options = append(cfg.Options, strings.Join(words, " "))
		case kw == "iface" || kw == "vlan":
			cur = nil
			if len(words) < 2 {
				errf(lineno, "error processing line '%s'", line)
				continue
			}
			name := words[1]
			family, method := "inet", ""
			if len(words) > 2 {
				family = words[2]
			}
			if len(words) > 3 {
				method = words[3]
			}
			if family != "inet" && family != "inet6" {
				errf(lineno, "iface %s: unsupported address family '%s'", name, family)
				family = "inet"
			} else if method != "" && !slices.Contains(ifupdownMethods, method) {
				errf(lineno, "iface %s: unsupported address method '%s'", name, method)
			}
			if method == "" {
				method = "static"
			}
			if name == "lo" {
				// The writer always puts lo first; keep it out of the ifaces.
				cur = &netIface{Name: "lo"}
				curFamily = family
				continue
			}
			d := cfg.Ifaces[name]
			if d == nil {
				d = &netIface{Name: name, Priority: priority}
				priority++
				cfg.Ifaces[name] = d
			}
			d.Families = append(d.Families, family)
			if family == "inet6" {
				d.Method6 = method
			} else {
				d.Method = method
			}
			cur, curFamily, commentsTo = d, family, d
		default:
			if cur == nil {
				errf(lineno, "error processing line '%s'", line)
				continue
			}
			if len(words) < 2 {
				// ifupdown2's parse_iface reports the 0-based index here.
				errf(lineno-1, "iface %s: invalid syntax '%s'", cur.Name, line)
				continue
			}
			if cur.Name == "lo" {
				continue
			}
			value := strings.TrimSpace(line[len(kw):])
			setOption(cur, curFamily, kw, value)
			commentsTo = cur
		}
	}
	for n := range auto {
		if d := cfg.Ifaces[n]; d != nil {
			d.Autostart = true
		}
	}
	for n, d := range cfg.Ifaces {
		d.Type = readerType(n, d, physical)
		// A single inet stanza and the methods derived from the addresses
		// are what the model derives by itself.
		if slices.Equal(d.Families, []string{"inet"}) && d.Address6 == "" {
			d.Families = nil
		}
		if d.Method == "static" && d.Address != "" || d.Method == "manual" && d.Address == "" {
			d.Method = ""
		}
		if d.Method6 == "static" && d.Address6 != "" || d.Method6 == "manual" && d.Address6 == "" {
			d.Method6 = ""
		}
	}
	return cfg, errs
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' }

// setOption stores one option line of a stanza, as PVE's reader maps its
// names (bond-slaves and bond_slaves alike, and so on).
func setOption(d *netIface, family, key, value string) {
	switch strings.ReplaceAll(key, "_", "-") {
	case "address":
		addr, mask, hasMask := strings.Cut(value, "/")
		if family == "inet6" || strings.Contains(addr, ":") {
			d.Address6 = addr
			if hasMask {
				d.Netmask6 = mask
			}
		} else {
			d.Address = addr
			if hasMask {
				d.Netmask = mask
			}
		}
	case "netmask":
		if family == "inet6" {
			d.Netmask6 = value
		} else if bits, ok := maskBits(value); ok {
			d.Netmask = strconv.Itoa(bits)
		} else {
			d.Netmask = value
		}
	case "gateway":
		if family == "inet6" || strings.Contains(value, ":") {
			d.Gateway6 = value
		} else {
			d.Gateway = value
		}
	case "mtu":
		d.MTU, _ = strconv.Atoi(value)
	case "bridge-ports":
		d.BridgePorts = joinSortedPorts(d.BridgePorts, value)
		if d.Type == "" {
			d.Type = "bridge" // also for bridge-ports none
		}
	case "bridge-vlan-aware":
		one := 1 // PVE's reader: defined is what counts
		d.BridgeVlanAware = &one
	case "bridge-vids":
		v := strings.Join(strings.Fields(value), " ")
		d.BridgeVids = &v
	case "bond-slaves", "slaves":
		d.Slaves = joinSortedPorts(d.Slaves, value)
	case "bond-mode":
		if n, ok := bondModeNames[value]; ok {
			value = n
		}
		d.BondMode = value
	case "bond-xmit-hash-policy":
		d.BondXmitHashPolicy = value
	case "bond-primary":
		d.BondPrimary = value
	case "vlan-raw-device":
		d.VlanRawDevice = value
	case "vlan-id":
		d.VlanID, _ = strconv.Atoi(value)
	}
}

// joinSortedPorts is the reader's port list: sorted, unique, "none"
// dropped, appended to what an earlier line gave.
func joinSortedPorts(old, value string) string {
	set := map[string]bool{}
	for _, p := range strings.Fields(value) {
		if p != "none" {
			set[p] = true
		}
	}
	ports := make([]string, 0, len(set))
	for p := range set {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	s := strings.Join(ports, " ")
	switch {
	case old == "":
		return s
	case s == "":
		return old
	}
	return old + " " + s
}

// readerType is the type PVE's reader gives an interface.
func readerType(name string, d *netIface, physical []string) string {
	switch {
	case d.Type == "bridge" || d.BridgePorts != "":
		return "bridge"
	case bondDigitRE.MatchString(name) || d.Slaves != "":
		// PVE's reader takes bond\d+ names; ifupdown2 any name with slaves.
		return "bond"
	case aliasRE.MatchString(name):
		return "alias"
	case vlanDotRE.MatchString(name) || d.VlanRawDevice != "":
		return "vlan"
	case slices.Contains(physical, name) || physicalNICRE.MatchString(name):
		return "eth"
	}
	return "unknown"
}

// fileText is the interfaces file as it is on disk.
func (cfg *netConfig) fileText() string {
	if cfg.Hand {
		return cfg.Text
	}
	return cfg.render()
}
