package nodeexec

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a command that failed: it exited non-zero, or never ran or
// finished because of the connection, a timeout or cancellation. Command,
// Stdout and Stderr have secrets replaced by "<redacted>" and are cut to
// a few KiB.
type Error struct {
	Node    string
	Command string // the command line with secrets redacted
	// ExitCode is the program's exit status, or -1 when none arrived.
	ExitCode int
	Stdout   string
	Stderr   string
	// Err is why the command did not finish (connection, host key,
	// timeout, cancellation); nil when it ran and exited non-zero.
	Err error
	// sudo is set when the command ran through sudo -n.
	sudo bool
	user string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %s: %s", e.Node, e.Command)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	} else {
		fmt.Fprintf(&b, ": exit status %d", e.ExitCode)
	}
	if s := strings.TrimRight(e.Stderr, "\n"); s != "" {
		b.WriteString("\nstderr:\n" + s)
	}
	if s := strings.TrimRight(e.Stdout, "\n"); s != "" && e.Err == nil {
		b.WriteString("\nstdout:\n" + s)
	}
	if e.sudo && sudoRefused(e.Stderr) {
		fmt.Fprintf(&b, "\nThe provider logs in as %q and runs commands through `sudo -n`, which needs a password-less sudo rule "+
			"for that user (for example %s ALL=(root) NOPASSWD: ALL in /etc/sudoers.d/), or log in as root.", e.user, e.user)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func sudoRefused(stderr string) bool {
	return strings.Contains(stderr, "sudo: a password is required") ||
		strings.Contains(stderr, "is not in the sudoers file") ||
		strings.Contains(stderr, "is not allowed to execute")
}

// ExitCode returns the exit status a failed command reported, and false
// when err is not such a failure (or the command never exited).
func ExitCode(err error) (int, bool) {
	var e *Error
	if errors.As(err, &e) && e.Err == nil && e.ExitCode >= 0 {
		return e.ExitCode, true
	}
	return 0, false
}

// maxShown is how much of each output stream an error keeps.
const maxShown = 4096

// shorten keeps the start and the end of s, where programs print what
// they were doing and why they failed.
func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	half := maxShown / 2
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", s[:half], len(s)-2*half, s[len(s)-half:])
}
