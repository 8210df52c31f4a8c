package framework

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// SplitImportOptions splits an import ID of the form
// "<id>?name=value&name=value" into the ID and its options. The options
// are settings of the provider's own that PVE cannot report (what to do
// after a write: restart units, roll restarts), so that an import can
// record what the configuration says and the first plan stays empty
// (issue #12: adopting a lab changes nothing). allowed names the options
// a resource takes and, for each, the valid values (nil: any value).
func SplitImportOptions(id string, allowed map[string][]string) (string, map[string]string, error) {
	base, query, found := strings.Cut(id, "?")
	if !found {
		return id, nil, nil
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, fmt.Errorf("the options after %q are not name=value pairs joined by &: %w", "?", err)
	}
	names := make([]string, 0, len(allowed))
	for n := range allowed {
		names = append(names, n)
	}
	sort.Strings(names)
	opts := map[string]string{}
	for name, vs := range vals {
		valid, ok := allowed[name]
		if !ok {
			return "", nil, fmt.Errorf("unknown import option %q: valid options are %s", name, strings.Join(names, ", "))
		}
		if len(vs) != 1 {
			return "", nil, fmt.Errorf("import option %q is given %d times: give it once", name, len(vs))
		}
		if valid != nil && !contains(valid, vs[0]) {
			return "", nil, fmt.Errorf("import option %s=%q: valid values are %s", name, vs[0], strings.Join(valid, ", "))
		}
		opts[name] = vs[0]
	}
	return base, opts, nil
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
