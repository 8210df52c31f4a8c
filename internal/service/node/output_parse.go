package node

import (
	"strings"
)

// Parsers of command output, kept apart from the commands so that they
// can be fuzzed (output_parse_fuzz_test.go).

// parseEthtoolDriver returns the driver line of `ethtool -i` ("" when
// there is none).
func parseEthtoolDriver(out string) string {
	driver := ""
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "driver: "); ok {
			driver = strings.TrimSpace(v)
		}
	}
	return driver
}

// parseSystemctlShow reads the KEY=VALUE lines of `systemctl show`.
func parseSystemctlShow(out string) map[string]string {
	props := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			props[k] = v
		}
	}
	return props
}

// parseStat reads `stat -c %a|%U|%G|%F` (false when it is not that).
func parseStat(out string) (*nodeFile, bool) {
	f := strings.SplitN(strings.TrimSuffix(out, "\n"), "|", 4)
	if len(f) != 4 {
		return nil, false
	}
	mode, ok := parseMode(f[0])
	if !ok {
		return nil, false
	}
	return &nodeFile{kind: f[3], mode: mode, owner: f[1], group: f[2]}, true
}

// parseTunedActive reads `tuned-adm active` (false when it names no
// profile and does not say there is none).
func parseTunedActive(out string) (activeProfile, bool) {
	var a activeProfile
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Current active profile: "):
			a.profile = strings.TrimSpace(strings.TrimPrefix(line, "Current active profile: "))
		case strings.HasPrefix(line, "Preset profile: "):
			a.preset = strings.TrimSpace(strings.TrimPrefix(line, "Preset profile: "))
		}
	}
	if a.profile == "" && a.preset == "" && !strings.Contains(out, "No current active profile.") {
		return a, false
	}
	return a, true
}
