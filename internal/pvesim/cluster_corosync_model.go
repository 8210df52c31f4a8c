package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config_digest is a SHA-1 of corosync.conf
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// corosync.conf as pve-cluster writes it (PVE/Corosync.pm): nodes, links,
// totem, and the link property strings of create, join and add-node.

// Cluster create/join after pve-cluster PVE::API2::ClusterConfig,
// PVE::Cluster::Setup and PVE::Corosync. A cluster is a property of a
// trust domain: creating one turns the founding node's /etc/pve into the
// cluster's; joining replaces the joining node's /etc/pve with the
// cluster's (root password, token, CA) and reissues its certificate.

// corosyncConf is /etc/pve/corosync.conf of one trust domain.
type corosyncConf struct {
	Name             string                   `json:"name"`
	ConfigVersion    int64                    `json:"config_version"`
	TokenCoefficient *int64                   `json:"token_coefficient,omitempty"`
	Links            map[int]int64            `json:"links"` // totem interfaces: link number -> knet priority
	Nodes            map[string]*corosyncNode `json:"nodes"`
}

type corosyncNode struct {
	Name   string         `json:"name"`
	NodeID int64          `json:"nodeid"`
	Votes  int64          `json:"quorum_votes"`
	Rings  map[int]string `json:"rings"`
}

func (cc *corosyncConf) sortedNodes() []*corosyncNode {
	out := make([]*corosyncNode, 0, len(cc.Nodes))
	for _, n := range cc.Nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// render writes corosync.conf as PVE does; its SHA-1 is config_digest.
func (cc *corosyncConf) render() string {
	var b strings.Builder
	b.WriteString("logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n")
	for _, n := range cc.sortedNodes() {
		fmt.Fprintf(&b, "  node {\n    name: %s\n    nodeid: %d\n    quorum_votes: %d\n", n.Name, n.NodeID, n.Votes)
		for _, l := range sortedInts(n.Rings) {
			fmt.Fprintf(&b, "    ring%d_addr: %s\n", l, n.Rings[l])
		}
		b.WriteString("  }\n")
	}
	fmt.Fprintf(&b, "}\n\nquorum {\n  provider: corosync_votequorum\n}\n\ntotem {\n  cluster_name: %s\n  config_version: %d\n", cc.Name, cc.ConfigVersion)
	for _, l := range sortedIntKeys(cc.Links) {
		fmt.Fprintf(&b, "  interface {\n")
		if p := cc.Links[l]; p != 0 {
			fmt.Fprintf(&b, "    knet_link_priority: %d\n", p)
		}
		fmt.Fprintf(&b, "    linknumber: %d\n  }\n", l)
	}
	b.WriteString("  ip_version: ipv4-6\n  link_mode: passive\n  secauth: on\n")
	if cc.TokenCoefficient != nil {
		fmt.Fprintf(&b, "  token_coefficient: %d\n", *cc.TokenCoefficient)
	}
	b.WriteString("  version: 2\n}\n")
	return b.String()
}

func (cc *corosyncConf) digest() string {
	sum := sha1.Sum([]byte(cc.render())) //nolint:gosec // PVE's digest
	return hex.EncodeToString(sum[:])
}

// totem is the parsed totem section: every value a string, as
// PVE::Corosync::parse_conf leaves it.
func (cc *corosyncConf) totem() map[string]any {
	ifaces := map[string]any{}
	for _, l := range sortedIntKeys(cc.Links) {
		e := map[string]any{"linknumber": strconv.Itoa(l)}
		if p := cc.Links[l]; p != 0 {
			e["knet_link_priority"] = strconv.FormatInt(p, 10)
		}
		ifaces[strconv.Itoa(l)] = e
	}
	t := map[string]any{
		"cluster_name": cc.Name, "config_version": strconv.FormatInt(cc.ConfigVersion, 10),
		"interface": ifaces, "ip_version": "ipv4-6", "link_mode": "passive", "secauth": "on", "version": "2",
	}
	if cc.TokenCoefficient != nil {
		t["token_coefficient"] = strconv.FormatInt(*cc.TokenCoefficient, 10)
	}
	return t
}

// nodeEntry is one parsed nodelist entry (string values).
func (n *corosyncNode) entry() map[string]any {
	m := map[string]any{"name": n.Name, "nodeid": strconv.FormatInt(n.NodeID, 10), "quorum_votes": strconv.FormatInt(n.Votes, 10)}
	for l, a := range n.Rings {
		m[fmt.Sprintf("ring%d_addr", l)] = a
	}
	return m
}

func sortedInts(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func sortedIntKeys(m map[int]int64) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// corosyncLink is one parsed link[n] property string.
type corosyncLink struct {
	Address  string
	Priority int64
}

// parseCorosyncLink parses `[address=]<IP>[,priority=<0..255>]`. The error
// is the per-parameter text PVE's property-string check gives.
func parseCorosyncLink(key, v string) (corosyncLink, string) {
	var l corosyncLink
	haveAddr, havePrio := false, false
	for _, part := range strings.Split(v, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, val, hasEq := strings.Cut(part, "=")
		switch {
		case !hasEq:
			if haveAddr {
				return l, "invalid format - duplicate key in comma-separated list property: address\n"
			}
			l.Address, haveAddr = part, true
		case val == "" || k == "":
			return l, "invalid format - missing key in comma-separated list property\n"
		case k == "address":
			if haveAddr {
				return l, "invalid format - duplicate key in comma-separated list property: address\n"
			}
			l.Address, haveAddr = val, true
		case k == "priority":
			if havePrio {
				return l, "invalid format - duplicate key in comma-separated list property: priority\n"
			}
			havePrio = true
			if !integerRE.MatchString(val) {
				return l, fmt.Sprintf("invalid format - format error\n%s.priority: type check ('integer') failed - got '%s'\n", key, val)
			}
			n, _ := strconv.ParseInt(val, 10, 64)
			if n < 0 {
				return l, fmt.Sprintf("invalid format - format error\n%s.priority: value must have a minimum value of 0\n", key)
			}
			if n > 255 {
				return l, fmt.Sprintf("invalid format - format error\n%s.priority: value must have a maximum value of 255\n", key)
			}
			l.Priority = n
		default:
			return l, fmt.Sprintf("invalid format - invalid key in comma-separated list property: %s\n", k)
		}
	}
	if !haveAddr {
		return l, fmt.Sprintf("invalid format - format error\n%s.address: property is missing and it is not optional\n", key)
	}
	if _, err := netip.ParseAddr(l.Address); err != nil && !dnsNameRE.MatchString(l.Address) {
		return l, fmt.Sprintf("invalid format - format error\n%s.address: invalid format - value does not look like a valid address: %s\n", key, l.Address)
	}
	return l, ""
}

// linkParams adds link0..link7 to a schema.
func linkParams(sc schema) schema {
	for i := 0; i <= maxLinkIndex; i++ {
		name := fmt.Sprintf("link%d", i)
		sc[name] = psParam(corosyncLinkFormat, name)
	}
	return sc
}

// extractLinks parses the link[n] parameters; errors are 400 per parameter.
func extractLinks(params map[string]string) (map[int]corosyncLink, *apiError) {
	links := map[int]corosyncLink{}
	errs := map[string]string{}
	for i := 0; i <= maxLinkIndex; i++ {
		key := fmt.Sprintf("link%d", i)
		v, ok := params[key]
		if !ok || v == "" {
			continue
		}
		l, msg := parseCorosyncLink(key, v)
		if msg != "" {
			errs[key] = msg
			continue
		}
		links[i] = l
	}
	if len(errs) > 0 {
		return nil, paramErr(errs)
	}
	return links, nil
}

func sortedLinkKeys(m map[int]corosyncLink) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
