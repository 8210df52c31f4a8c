package pve

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// NodeConfig is /etc/pve/nodes/{node}/config: the node's ACME settings and
// description, plus every other option as PVE returns it.
type NodeConfig struct {
	// ACMEAccount is the account of the `acme` option ("" when unset;
	// PVE then uses "default").
	ACMEAccount string
	// ACMEDomains are acmedomain0..acmedomain5 by index.
	ACMEDomains map[int]ACMEDomain
	// Description is the node's notes, without the newline PVE appends to
	// each line when it reads them back.
	Description string
	// Digest is the SHA-1 of the file ("" while the file is empty).
	Digest string
	// Raw holds every option as PVE returned it.
	Raw map[string]string
}

// ACMEDomain is one acmedomainN option.
type ACMEDomain struct {
	Domain string
	Alias  string // DNS alias for the challenge
	Plugin string // plugin id; "" means PVE's default, standalone
}

// MaxACMEDomainIndex is the highest n of acmedomainN.
const MaxACMEDomainIndex = 5

// String renders the option value, "[domain=]D[,alias=A][,plugin=P]".
func (d ACMEDomain) String() string {
	s := d.Domain
	if strings.Contains(s, "=") {
		s = "domain=" + s // bare, it would read as a key
	}
	if d.Alias != "" {
		s += ",alias=" + d.Alias
	}
	if d.Plugin != "" {
		s += ",plugin=" + d.Plugin
	}
	return s
}

// ParseACMEDomain parses an acmedomainN value.
func ParseACMEDomain(v string) ACMEDomain {
	var d ACMEDomain
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		switch {
		case !ok:
			d.Domain = part
		case k == "domain":
			d.Domain = val
		case k == "alias":
			d.Alias = val
		case k == "plugin":
			d.Plugin = val
		}
	}
	return d
}

// ParseACMEOption returns the account of an `acme` option value
// ("account=NAME[,domains=...]").
func ParseACMEOption(v string) (account string) {
	for _, part := range strings.Split(v, ",") {
		if k, val, ok := strings.Cut(part, "="); ok && k == "account" {
			return val
		}
	}
	return ""
}

func nodeConfigPath(node string) string { return "/nodes/" + PathEscape(node) + "/config" }

// NodeConfig reads the node's configuration.
//
//pve:operation GET /nodes/{node}/config
func (c *Client) NodeConfig(ctx context.Context, node string) (*NodeConfig, error) {
	var w map[string]flexString
	if err := c.Get(ctx, nodeConfigPath(node), nil, &w); err != nil {
		return nil, err
	}
	nc := &NodeConfig{ACMEDomains: map[int]ACMEDomain{}, Raw: map[string]string{}}
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := string(w[k])
		nc.Raw[k] = v
		switch {
		case k == "digest":
			nc.Digest = v
		case k == "description":
			nc.Description = strings.TrimSuffix(v, "\n")
		case k == "acme":
			nc.ACMEAccount = ParseACMEOption(v)
		case strings.HasPrefix(k, "acmedomain"):
			if i, err := strconv.Atoi(strings.TrimPrefix(k, "acmedomain")); err == nil {
				nc.ACMEDomains[i] = ParseACMEDomain(v)
			}
		}
	}
	return nc, nil
}

// UpdateNodeConfig sets the options in set, deletes those in del and, with
// a digest, refuses if the file changed meanwhile.
//
//pve:operation PUT /nodes/{node}/config
func (c *Client) UpdateNodeConfig(ctx context.Context, node string, set map[string]string, del []string, digest string) error {
	p := Params{}
	for k, v := range set {
		if k == "delete" || k == "digest" || k == "node" {
			return fmt.Errorf("UpdateNodeConfig: %q is not an option", k)
		}
		p.Set(k, v)
	}
	p.Delete(del...)
	if digest != "" {
		p.Set("digest", digest)
	}
	return c.Put(ctx, nodeConfigPath(node), p, nil)
}
