package framework

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// validate runs v on s at attribute "a" and returns the error detail, ""
// when valid.
func validate(v validator.String, s string) string {
	req := validator.StringRequest{Path: path.Root("a"), ConfigValue: types.StringValue(s)}
	var resp validator.StringResponse
	v.ValidateString(context.Background(), req, &resp)
	if !resp.Diagnostics.HasError() {
		return ""
	}
	return resp.Diagnostics.Errors()[0].Summary() + ": " + resp.Diagnostics.Errors()[0].Detail()
}

func TestValidators(t *testing.T) {
	for _, c := range []struct {
		v    validator.String
		in   string
		want string // fragment of the error, "" for valid
	}{
		{NodeName(), "z2g4a", ""},
		{NodeName(), "Z2-g4A", ""},
		{NodeName(), "a", ""},
		{NodeName(), "z2g4a.lab", `Invalid node name: a must be a PVE node name such as z2g4a`},
		{NodeName(), "-z2", `got "-z2"`},
		{NodeName(), "z2-", `not starting or ending with a hyphen`},
		{NodeName(), "", `Invalid node name`},

		// PVE's CIDR formats: prefix length 8..32 / 8..128, host bits allowed.
		{CIDR(AnyIP), "169.254.50.0/24", ""},
		{CIDR(AnyIP), "169.254.50.10/24", ""},
		{CIDR(AnyIP), "fd00::/64", ""},
		{CIDR(AnyIP), "10.0.0.0/8", ""},
		{CIDR(AnyIP), "10.0.0.0/7", `Invalid CIDR: a must be an IPv4 or IPv6 address with a prefix length`},
		{CIDR(AnyIP), "169.254.50.0", `got "169.254.50.0"`},
		{CIDR(AnyIP), "::ffff:10.0.0.1/104", `Invalid CIDR`},
		{CIDR(AnyIP), "fe80::1%eth0/64", `Invalid CIDR`},
		{CIDR(IPv4), "172.27.2.10/24", ""},
		{CIDR(IPv4), "fd00::10/64", `a must be an IPv4 address with a prefix length`},
		{CIDR(IPv4), "10.0.0.300/24", `Invalid CIDR`},
		{CIDR(IPv6), "fd00::10/64", ""},
		{CIDR(IPv6), "172.27.2.10/24", `such as fd00::10/64`},
		{CIDR(IPv6), "fd00::/0", `Invalid CIDR`},

		{IP(AnyIP), "169.254.50.10", ""},
		{IP(AnyIP), "fd00::10", ""},
		{IP(AnyIP), "169.254.50.10/24", `Invalid IP address: a must be an IPv4 or IPv6 address such as 169.254.50.10 (no port, no prefix length)`},
		{IP(AnyIP), "169.254.50.10:6789", `got "169.254.50.10:6789"`},
		{IP(IPv4), "fd00::1", `must be an IPv4 address`},
		{IP(IPv6), "172.27.2.254", `must be an IPv6 address such as fd00::10`},
	} {
		got := validate(c.v, c.in)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%T %q: got %q, want %q", c.v, c.in, got, c.want)
		}
	}
	// Null and unknown are left to Required and to apply.
	for _, v := range []validator.String{NodeName(), CIDR(AnyIP), IP(AnyIP)} {
		for _, val := range []types.String{types.StringNull(), types.StringUnknown()} {
			var resp validator.StringResponse
			v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("a"), ConfigValue: val}, &resp)
			if resp.Diagnostics.HasError() {
				t.Errorf("%T on %v: %v", v, val, resp.Diagnostics)
			}
		}
	}
}

// A data source's node checks the node-name rule whether it is required
// or optional.
func TestDataSourceNodeAttribute(t *testing.T) {
	for _, required := range []bool{true, false} {
		a := DataSourceNodeAttribute("", required)
		if a.Required != required || a.Optional == required || a.MarkdownDescription != NodeDescription || len(a.Validators) != 1 {
			t.Fatalf("required=%v: %+v", required, a)
		}
		if got := validate(a.Validators[0], "z2g4a.lab"); !strings.Contains(got, "Invalid node name") {
			t.Fatalf("required=%v: z2g4a.lab accepted (%q)", required, got)
		}
	}
}
