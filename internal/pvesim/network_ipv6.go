package pvesim

import (
	"net/netip"
	"strconv"
)

// Host-address check of an interface's IPv6 address, as pve-manager
// PVE/API2/Network.pm $check_ipv6_settings does it on create and update
// (after cidr6 is split). Its errors are filed under "address" and
// "netmask", not the v6 names. The type comes from Net::IP's ip_iptypev6
// (longest matching prefix); only unicast types may be host addresses.

type v6Range struct {
	prefix netip.Prefix
	typ    string
}

var v6Ranges = func() []v6Range {
	var out []v6Range
	for _, r := range []struct{ p, t string }{
		{"::/8", "RESERVED"}, {"::/128", "UNSPECIFIED"}, {"::1/128", "LOOPBACK"},
		{"::ffff:0:0/96", "IPV4MAP"}, {"100::/8", "RESERVED"}, {"100::/64", "DISCARD"},
		{"200::/7", "RESERVED"}, {"400::/6", "RESERVED"}, {"800::/5", "RESERVED"},
		{"1000::/4", "RESERVED"}, {"2000::/3", "GLOBAL-UNICAST"}, {"2001::/32", "TEREDO"},
		{"2001:2::/48", "BMWG"}, {"2001:db8::/32", "DOCUMENTATION"}, {"2001:10::/28", "ORCHID"},
		{"2002::/16", "6TO4"}, {"4000::/3", "RESERVED"}, {"6000::/3", "RESERVED"},
		{"8000::/3", "RESERVED"}, {"a000::/3", "RESERVED"}, {"c000::/3", "RESERVED"},
		{"e000::/4", "RESERVED"}, {"f000::/5", "RESERVED"}, {"f800::/6", "RESERVED"},
		{"fc00::/7", "UNIQUE-LOCAL-UNICAST"}, {"fe00::/9", "RESERVED"},
		{"fe80::/10", "LINK-LOCAL-UNICAST"}, {"fec0::/10", "RESERVED"}, {"ff00::/8", "MULTICAST"},
	} {
		out = append(out, v6Range{netip.MustParsePrefix(r.p), r.t})
	}
	return out
}()

func ipv6Type(a netip.Addr) string {
	best, typ := -1, ""
	for _, r := range v6Ranges {
		if r.prefix.Bits() > best && r.prefix.Contains(a) {
			best, typ = r.prefix.Bits(), r.typ
		}
	}
	return typ
}

// v6Mask is the address whose first bits are the netmask's ones.
func v6Mask(bits int) netip.Addr {
	var b [16]byte
	for i := 0; i < bits; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom16(b)
}

func checkIPv6Settings(p map[string]string) *apiError {
	addr := p["address6"]
	if addr == "" {
		return nil
	}
	mask, _ := strconv.Atoi(p["netmask6"]) // Perl int(): junk is 0
	if mask < 0 || mask > 128 {
		return paramErr1("netmask", strconv.Itoa(mask)+" is not a valid subnet length for ipv6")
	}
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return paramErr1("address", addr+" is not a valid host IPv6 address.")
	}
	// Network.pm calls an address equal to the mask bits ANYCAST.
	typ := ipv6Type(a)
	if a == v6Mask(mask) {
		typ = "ANYCAST"
	}
	switch typ {
	case "GLOBAL-UNICAST", "UNIQUE-LOCAL-UNICAST", "LINK-LOCAL-UNICAST":
		return nil
	}
	return paramErr1("address", addr+" with type '"+typ+"', cannot be used as host IPv6 address.")
}
