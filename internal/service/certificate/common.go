package certificate

import (
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	configIDRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]+$`)
	emailRE    = regexp.MustCompile(`^[\w+\-~]+(?:\.[\w+\-~]+)*@[a-zA-Z0-9\-]+(?:\.[a-zA-Z0-9\-]+)*$`)
	domainRE   = regexp.MustCompile(`^(?i:[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*)+)$`)
	aliasRE    = regexp.MustCompile(`^(?i:[a-z0-9_][a-z0-9_-]*(?:\.[a-z0-9_][a-z0-9_-]*)+)$`)
)

var directoryRE = regexp.MustCompile(`^https?://.+`)

var (
	acmeAPIRE = regexp.MustCompile(`^[a-z0-9_]+$`)
	dataKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

type attrValue = attr.Value

// optString maps PVE's empty string to null.
func optString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}
