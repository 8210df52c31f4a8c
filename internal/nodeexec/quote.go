package nodeexec

import "strings"

// quoteArg is the only place in the provider that turns a value into shell
// syntax. It returns s as exactly one word of a POSIX shell command line:
// words made only of characters no shell treats specially stay as they
// are (for readable logs); everything else is wrapped in single quotes,
// inside which a POSIX shell interprets nothing, and each single quote in
// s is written as '\” (close, escaped quote, reopen). Newlines, $, `, ;,
// |, &, globs and backslashes are therefore literal.
func quoteArg(s string) string {
	if s == "" {
		return "''"
	}
	if isPlainWord(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isPlainWord reports whether s needs no quoting: letters, digits and
// @%+=:,./-_ only. '~' (tilde expansion), '#' (comments), '!' and braces
// are quoted although they are special only in some positions or shells.
func isPlainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("@%+=:,./-_", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// sudoPrefix runs a command as root for a non-root login: -n fails instead
// of prompting for a password, -- ends sudo's options so an argument can
// never be taken for one.
var sudoPrefix = []string{"sudo", "-n", "--"}

// commandLine is what the node's login shell receives: every argv element
// through quoteArg, joined by spaces, behind sudo when the login is not
// root.
func commandLine(c *Command, sudo bool) string {
	var words []string
	if sudo {
		for _, w := range sudoPrefix {
			words = append(words, quoteArg(w))
		}
	}
	for _, a := range c.args {
		words = append(words, quoteArg(a.value))
	}
	return strings.Join(words, " ")
}
