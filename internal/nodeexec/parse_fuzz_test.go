package nodeexec

import (
	"net"
	"strings"
	"testing"
)

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"/etc/pve/ceph.conf", "/", "etc", "/a/../b", "/a//b", "/a\nb", "/a\x7fb", "/a b/'c'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckPath(p) != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || p == "/" || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.ContainsAny(p, "\n\r\x00") {
			t.Fatalf("CheckPath accepted %q", p)
		}
	})
}

func FuzzSplitAddress(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "10.0.0.1:2222", "[fd00::1]:22", "fd00::1", "host", ":22", "[::1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		host, port := splitAddress(a)
		if port == "" && !strings.HasSuffix(a, ":") {
			t.Fatalf("splitAddress(%q) = %q, %q: no port", a, host, port)
		}
		if _, _, err := net.SplitHostPort(a); err != nil && (host != a || port != "22") {
			t.Fatalf("splitAddress(%q) = %q, %q", a, host, port)
		}
	})
}

// FuzzQuoteArg: every argument is one shell word, plain or single-quoted
// with '\” for quotes, so it reads back as itself (the simulator's shell
// checks the same through the whole command line: pvesim FuzzParseShellLine).
func FuzzQuoteArg(f *testing.F) {
	for _, s := range []string{"", "plain", "it's", "$(id)", "a b", "'", "''", "\n", "~x", "#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := quoteArg(s)
		if q == s {
			if s == "" || !isPlainWord(s) {
				t.Fatalf("quoteArg(%q) left it bare", s)
			}
			return
		}
		inner, ok1 := strings.CutPrefix(q, "'")
		inner, ok2 := strings.CutSuffix(inner, "'")
		if !ok1 || !ok2 || strings.ReplaceAll(inner, `'\''`, "'") != s {
			t.Fatalf("quoteArg(%q) = %s", s, q)
		}
		if strings.Contains(strings.ReplaceAll(inner, `'\''`, ""), "'") {
			t.Fatalf("quoteArg(%q) = %s: a quote is not escaped", s, q)
		}
	})
}
