package certificate

import (
	"testing"
)

// FuzzParseChain: any text yields a chain or an error (never a panic), and
// a chain has its leaf first.
func FuzzParseChain(f *testing.F) {
	for _, s := range []string{
		"", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "text\n-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
		"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\ntrailing", "-----BEGIN CERTIFICATE-----",
	} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, chain, key string) {
		pc, err := parseChain(chain)
		if err == nil && (pc == nil || len(pc.chain) == 0 || pc.leaf != pc.chain[0]) {
			t.Fatalf("parseChain(%q) = %+v", chain, pc)
		}
		_ = checkKey(chain, key)
	})
}
