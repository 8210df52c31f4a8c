package apt

import "github.com/pvelab/terraform-provider-pve/internal/pve"

// HandleOf returns the standard handle among handles that entry e is an
// entry of, by the rule the resource finds a handle's entries with
// (handleMatcher), or "" when e belongs to none of them: a custom line.
// The adoption (internal/adopt) uses it to tell standard repositories
// from ones the configuration cannot express.
func HandleOf(e pve.APTRepository, handles []string) string {
	for _, h := range handles {
		if match, ok := handleMatcher(h); ok && match(e) {
			return h
		}
	}
	return ""
}
