package adopt

import (
	"sort"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// objectList writes a list of objects one element per line, as a person
// would (links = [ { address = "..." }, ... ]): small objects of plain
// values on one line, others as blocks of one key per line. It reports
// false for a list that holds anything but objects.
func objectList(x []any) (hclwrite.Tokens, bool) {
	if len(x) == 0 {
		return nil, false
	}
	for _, e := range x {
		if _, ok := e.(map[string]any); !ok {
			return nil, false
		}
	}
	t := hclwrite.Tokens{
		{Type: hclsyntax.TokenOBrack, Bytes: []byte("[")},
		{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
	}
	for _, e := range x {
		m, _ := e.(map[string]any) // every element is one: checked above
		if it, ok := inlineObject(m); ok {
			t = append(t, it...)
		} else {
			t = append(t, tokens(m)...)
		}
		t = append(t, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")},
			&hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
	}
	return append(t, &hclwrite.Token{Type: hclsyntax.TokenCBrack, Bytes: []byte("]")}), true
}

// inlineObject writes { k = v, k2 = v2 } for an object of at most three
// plain values (strings without newlines, numbers, bools).
func inlineObject(m map[string]any) (hclwrite.Tokens, bool) {
	if len(m) == 0 || len(m) > 3 {
		return nil, false
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		switch s := v.(type) {
		case string:
			if _, multi := heredoc(s); multi {
				return nil, false
			}
		case bool, int, int64, float64:
		default:
			return nil, false
		}
		if !hclsyntax.ValidIdentifier(k) {
			return nil, false
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := hclwrite.Tokens{{Type: hclsyntax.TokenOBrace, Bytes: []byte("{")}}
	for i, k := range keys {
		if i > 0 {
			t = append(t, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")})
		}
		t = append(t, &hclwrite.Token{Type: hclsyntax.TokenIdent, Bytes: []byte(k), SpacesBefore: 1},
			&hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("="), SpacesBefore: 1})
		vt := tokens(m[k])
		if len(vt) > 0 {
			vt[0].SpacesBefore = 1
		}
		t = append(t, vt...)
	}
	return append(t, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}"), SpacesBefore: 1}), true
}
