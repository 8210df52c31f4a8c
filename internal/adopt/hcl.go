package adopt

import (
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// file returns the body of a generated file, creating it on first use.
func (r *run) file(name string) *hclwrite.Body {
	f, ok := r.res.Files[name]
	if !ok {
		f = hclwrite.NewEmptyFile()
		r.res.Files[name] = f
		r.res.order = append(r.res.order, name)
	}
	return f.Body()
}

// comment appends comment lines (text split at newlines) to body, before
// the next block.
func comment(body *hclwrite.Body, text string) {
	var toks hclwrite.Tokens
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComment, Bytes: []byte(strings.TrimRight("# "+line, " ") + "\n")})
	}
	body.AppendUnstructuredTokens(toks)
}

// block appends a block (with a blank line before it when the body has
// content) and returns its body.
func block(body *hclwrite.Body, typ string, labels ...string) *hclwrite.Body {
	if len(body.Attributes())+len(body.Blocks()) > 0 || len(body.BuildTokens(nil)) > 0 {
		body.AppendNewline()
	}
	return body.AppendNewBlock(typ, labels).Body()
}

// set sets attribute name to the Go value v (see val).
func set(body *hclwrite.Body, name string, v any) { body.SetAttributeValue(name, val(v)) }

// setExpr sets attribute name to an HCL expression given as text, such as
// "each.key" or "pve_vm.lab[each.value.vm].vmid". It panics on a syntax
// error: expressions are written by this package, never taken from PVE.
func setExpr(body *hclwrite.Body, name, expr string) { body.SetAttributeRaw(name, exprTokens(expr)) }

func exprTokens(expr string) hclwrite.Tokens {
	f, diags := hclwrite.ParseConfig([]byte("x = "+expr+"\n"), "expr.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		panic(fmt.Sprintf("adopt: bad expression %q: %s", expr, diags.Error()))
	}
	return f.Body().GetAttribute("x").Expr().BuildTokens(nil)
}

// Expr is a value that val writes as an HCL expression instead of a
// literal (a reference inside a locals map, for example).
type Expr string

// val converts a Go value into the cty value hclwrite writes: string,
// bool, int, int64, float64, []string, []any (tuple), map[string]any and
// map[string]string (objects, keys sorted), nil (null). Anything else is a
// bug here and panics.
func val(v any) cty.Value {
	switch x := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType)
	case cty.Value:
		return x
	case string:
		return cty.StringVal(x)
	case bool:
		return cty.BoolVal(x)
	case int:
		return cty.NumberIntVal(int64(x))
	case int64:
		return cty.NumberIntVal(x)
	case float64:
		return cty.NumberVal(new(big.Float).SetFloat64(x))
	case []string:
		if len(x) == 0 {
			return cty.ListValEmpty(cty.String)
		}
		vals := make([]cty.Value, len(x))
		for i, s := range x {
			vals[i] = cty.StringVal(s)
		}
		return cty.TupleVal(vals)
	case []any:
		if len(x) == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, len(x))
		for i, e := range x {
			vals[i] = val(e)
		}
		return cty.TupleVal(vals)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return val(m)
	case map[string]any:
		if len(x) == 0 {
			return cty.EmptyObjectVal
		}
		m := make(map[string]cty.Value, len(x))
		for k, e := range x {
			m[k] = val(e)
		}
		return cty.ObjectVal(m)
	}
	panic(fmt.Sprintf("adopt: cannot write %T as HCL", v))
}

// setValue sets attribute name to v like set, but where v (or anything
// inside it) holds an Expr, the tokens are built by hand so that the
// expression is written as is.
func setValue(body *hclwrite.Body, name string, v any) { body.SetAttributeRaw(name, tokens(v)) }

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// heredoc writes a multi-line string ending in a newline (a PEM, a unit
// file) as a heredoc, as a person would; template sequences are escaped.
func heredoc(s string) (hclwrite.Tokens, bool) {
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") < 2 {
		return nil, false
	}
	delim := "EOT"
	for strings.Contains("\n"+s, "\n"+delim+"\n") {
		delim += "_"
	}
	body := strings.ReplaceAll(strings.ReplaceAll(s, "${", "$${"), "%{", "%%{")
	return hclwrite.Tokens{
		{Type: hclsyntax.TokenOHeredoc, Bytes: []byte("<<" + delim + "\n")},
		{Type: hclsyntax.TokenStringLit, Bytes: []byte(body)},
		{Type: hclsyntax.TokenCHeredoc, Bytes: []byte(delim)},
	}, true
}

// tokens writes v as HCL tokens: Exprs as written, objects one key per
// line with keys sorted.
func tokens(v any) hclwrite.Tokens {
	switch x := v.(type) {
	case Expr:
		return exprTokens(string(x))
	case string:
		if t, ok := heredoc(x); ok {
			return t
		}
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return tokens(l)
	case []any:
		if t, ok := objectList(x); ok {
			return t
		}
		var t hclwrite.Tokens
		t = append(t, &hclwrite.Token{Type: hclsyntax.TokenOBrack, Bytes: []byte("[")})
		for i, e := range x {
			if i > 0 {
				t = append(t, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")})
			}
			t = append(t, tokens(e)...)
		}
		if len(x) > 0 && hasHeredoc(t) {
			// A heredoc ends its line: the bracket goes on the next.
			t = append(t, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
		}
		return append(t, &hclwrite.Token{Type: hclsyntax.TokenCBrack, Bytes: []byte("]")})
	case map[string]any:
		if len(x) == 1 {
			// One plain value reads best on one line: { cidr = "..." }.
			if t, ok := inlineObject(x); ok {
				return t
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t := hclwrite.Tokens{
			{Type: hclsyntax.TokenOBrace, Bytes: []byte("{")},
			{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
		}
		for _, k := range keys {
			if hclsyntax.ValidIdentifier(k) {
				t = append(t, &hclwrite.Token{Type: hclsyntax.TokenIdent, Bytes: []byte(k)})
			} else {
				t = append(t, hclwrite.TokensForValue(cty.StringVal(k))...)
			}
			t = append(t, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("=")})
			t = append(t, tokens(x[k])...)
			t = append(t, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
		}
		return append(t, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}")})
	}
	return hclwrite.TokensForValue(val(v))
}

func hasHeredoc(t hclwrite.Tokens) bool {
	return len(t) > 0 && t[len(t)-1].Type == hclsyntax.TokenCHeredoc
}
