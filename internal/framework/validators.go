package framework

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// NodeNameRE is PVE's pve-node format (letters, digits and hyphens, not
// starting or ending with a hyphen); cluster names follow it too.
var NodeNameRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`)

// IsNodeName reports whether s is a valid PVE node name (NodeNameRE).
func IsNodeName(s string) bool { return NodeNameRE.MatchString(s) }

// NodeName validates a PVE node name, wherever one is configured: the
// node attribute, map keys and set elements naming nodes.
func NodeName() validator.String { return nodeNameValidator{} }

type nodeNameValidator struct{}

func (nodeNameValidator) Description(context.Context) string {
	return "must be a PVE node name such as z2g4a (letters, digits and hyphens, not starting or ending with a hyphen)"
}

func (v nodeNameValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v nodeNameValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || IsNodeName(req.ConfigValue.ValueString()) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid node name",
		fmt.Sprintf("%s %s; got %q. Use the name `pvecm nodes` or the GUI shows for the node.", req.Path, v.Description(ctx), req.ConfigValue.ValueString()))
}

// IPFamily restricts an address to IPv4 or IPv6; AnyIP accepts both.
type IPFamily int

// The address families CIDR and IP accept.
const (
	AnyIP IPFamily = iota
	IPv4
	IPv6
)

func (f IPFamily) String() string {
	switch f {
	case IPv4:
		return "IPv4"
	case IPv6:
		return "IPv6"
	}
	return "IPv4 or IPv6"
}

func (f IPFamily) accepts(a netip.Addr) bool {
	if a.Zone() != "" || a.Is4In6() {
		return false
	}
	switch f {
	case IPv4:
		return a.Is4()
	case IPv6:
		return a.Is6()
	}
	return true
}

func (f IPFamily) cidrExample() string {
	if f == IPv6 {
		return "fd00::10/64"
	}
	return "169.254.50.10/24"
}

// CIDR validates PVE's CIDR formats (CIDRv4, CIDRv6, CIDR): an address of
// the family with a prefix length of 8 to 32 (IPv4) or 8 to 128 (IPv6);
// host bits are allowed, as PVE allows them.
func CIDR(f IPFamily) validator.String { return cidrValidator{f} }

type cidrValidator struct{ family IPFamily }

func (v cidrValidator) Description(context.Context) string {
	return fmt.Sprintf("must be an %s address with a prefix length (8 to 32 for IPv4, 8 to 128 for IPv6), such as %s",
		v.family, v.family.cidrExample())
}

func (v cidrValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v cidrValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	p, err := netip.ParsePrefix(s)
	if err == nil && v.family.accepts(p.Addr()) && p.Bits() >= 8 {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid CIDR", fmt.Sprintf("%s %s; got %q.", req.Path, v.Description(ctx), s))
}

// IP validates one IP address of the family, without prefix length.
func IP(f IPFamily) validator.String { return ipValidator{f} }

type ipValidator struct{ family IPFamily }

func (v ipValidator) Description(context.Context) string {
	ex := "169.254.50.10"
	if v.family == IPv6 {
		ex = "fd00::10"
	}
	return fmt.Sprintf("must be an %s address such as %s (no port, no prefix length)", v.family, ex)
}

func (v ipValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v ipValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	if a, err := netip.ParseAddr(s); err == nil && v.family.accepts(a) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid IP address", fmt.Sprintf("%s %s; got %q.", req.Path, v.Description(ctx), s))
}

// StringCheck is a validator made of a check: check returns what is wrong
// with a configured value (nil when nothing is), reported as an error
// titled summary on the attribute. description says what is valid.
func StringCheck(description, summary string, check func(string) error) validator.String {
	return stringCheck{description, summary, check}
}

type stringCheck struct {
	description, summary string
	check                func(string) error
}

func (v stringCheck) Description(context.Context) string             { return v.description }
func (v stringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, v.summary, err.Error())
	}
}
