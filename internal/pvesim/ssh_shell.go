package pvesim

import (
	"fmt"
	"strings"
)

// shellError is a command line the simulated login shell refuses.
type shellError struct{ msg string }

func (e *shellError) Error() string { return e.msg }

// parseShellLine splits an exec request's command line into argv the way
// a POSIX shell (bash on PVE) would for one simple command: blanks
// separate words; single quotes keep everything literal; double quotes
// keep everything but \ before $ ` " \ and newline; a backslash outside
// quotes makes the next character literal.
//
// Where a real shell would do more than split words - unquoted ; & | < >
// ( ) $ ` and newlines (more commands, redirections, expansions), globs,
// braces, a leading ~ or #, an assignment before the command, or $ and `
// inside double quotes - the simulator refuses the line instead of
// guessing. Clients quote every argument, so hostile values arrive as one
// literal argv element each; a client that forgot to quote fails here
// the way it would misbehave on a node.
func parseShellLine(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	refuse := func(what string) error {
		return &shellError{msg: fmt.Sprintf("bash: pvesim refuses unquoted %s in the command line (a real shell would interpret it): %s", what, line)}
	}
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '\n':
			return nil, refuse("newline")
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, &shellError{msg: "bash: -c: line 1: unexpected EOF while looking for matching `''"}
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(line); i++ {
				d := line[i]
				if d == '"' {
					closed = true
					break
				}
				if d == '$' || d == '`' {
					return nil, refuse(fmt.Sprintf("%q inside double quotes", string(d)))
				}
				if d == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0 {
					i++
					if line[i] != '\n' {
						cur.WriteByte(line[i])
					}
					continue
				}
				cur.WriteByte(d)
			}
			if !closed {
				return nil, &shellError{msg: "bash: -c: line 1: unexpected EOF while looking for matching `\"'"}
			}
		case c == '\\':
			if i+1 < len(line) {
				i++
				if line[i] == '\n' {
					continue // line continuation
				}
				cur.WriteByte(line[i])
			} else {
				cur.WriteByte('\\')
			}
			inWord = true
		case strings.IndexByte(";&|<>()$`", c) >= 0:
			return nil, refuse(fmt.Sprintf("%q", string(c)))
		case strings.IndexByte("*?[{}", c) >= 0:
			return nil, refuse(fmt.Sprintf("%q (glob or brace expansion)", string(c)))
		case (c == '~' || c == '#') && !inWord:
			return nil, refuse(fmt.Sprintf("%q at the start of a word", string(c)))
		default:
			if c == '=' && len(words) == 0 && isShellName(cur.String()) && inWord {
				return nil, refuse("assignment before the command")
			}
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	return words, nil
}

// isShellName reports whether s is a valid shell variable name.
func isShellName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
