package nodeexec

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// redacted replaces a secret wherever a command or its output is shown.
const redacted = "<redacted>"

// Secret is a value that must never appear in logs or errors: a password
// in an argument, a key written to a file. Printing it with any fmt verb
// prints "<redacted>"; Reveal returns the value.
type Secret string

// String implements fmt.Stringer without revealing the value.
func (Secret) String() string { return redacted }

// GoString implements fmt.GoStringer without revealing the value.
func (Secret) GoString() string { return redacted }

// Format prints "<redacted>" for every verb, so %v, %s, %q and %x are safe.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// allowedPrograms are the only programs a Command may run. Each is a bare
// name the node resolves through its PATH; shells, interpreters and
// anything that would run a string as code are deliberately absent.
var allowedPrograms = map[string]bool{
	"ceph":                   true, // Ceph config database, flags, ok-to-stop
	"pveceph":                true, // pveceph install
	"systemctl":              true, // units: state, enable, restart
	"systemd-run":            true, // arm the network dead-man timer (a transient timer running a fixed script)
	"tuned-adm":              true, // tuned profile
	"ethtool":                true, // NIC ring sizes
	"fio":                    true, // disk benchmark
	"lsblk":                  true, // is a device in use (read-only)
	"findmnt":                true, // which filesystem holds a directory (read-only)
	"dpkg-query":             true, // installed package versions (read-only)
	"update-ca-certificates": true, // trust store
	"cat":                    true, // read a file
	"stat":                   true, // file mode and owner
	"ls":                     true, // list a directory (read-only: adoption finds drop-ins and trusted CAs)
	"install":                true, // write a file from stdin, make directories
	"mv":                     true, // rename a written file into place
	"rm":                     true, // remove a file
	"mkdir":                  true, // take a pmxcfs lock (/etc/pve/priv/lock/<name>)
	"rmdir":                  true, // release it
}

// AllowedPrograms lists the programs a Command may run, sorted.
func AllowedPrograms() []string {
	out := make([]string, 0, len(allowedPrograms))
	for p := range allowedPrograms {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Command is one program with its arguments, run on a node without any
// shell interpretation of the values: each argument arrives as exactly one
// argv element, whatever characters it holds.
type Command struct {
	args        []arg
	stdin       []byte
	stdinSecret bool
	timeout     time.Duration
	acceptExit  map[int]bool
}

type arg struct {
	value  string
	secret bool
}

// Cmd returns a command that runs program with args. Run refuses programs
// that are not in AllowedPrograms.
func Cmd(program string, args ...string) *Command {
	c := &Command{args: []arg{{value: program}}}
	return c.Arg(args...)
}

// Arg appends plain arguments.
func (c *Command) Arg(args ...string) *Command {
	for _, a := range args {
		c.args = append(c.args, arg{value: a})
	}
	return c
}

// Secret appends an argument that is shown as "<redacted>" in logs and
// errors, and scrubbed from the command's output in errors. Prefer
// SecretInput: arguments are visible to other users of the node in ps.
func (c *Command) Secret(v Secret) *Command {
	c.args = append(c.args, arg{value: string(v), secret: true})
	return c
}

// Input sends b to the program's standard input.
func (c *Command) Input(b []byte) *Command {
	c.stdin, c.stdinSecret = b, false
	return c
}

// SecretInput sends v to the program's standard input and scrubs it from
// the command's output in errors. Standard input is never logged.
func (c *Command) SecretInput(v Secret) *Command {
	c.stdin, c.stdinSecret = []byte(v), true
	return c
}

// WithTimeout bounds this command; without it the pool's CommandTimeout
// applies.
func (c *Command) WithTimeout(d time.Duration) *Command {
	c.timeout = d
	return c
}

// AcceptExit makes exit codes other than 0 ordinary results instead of
// errors, such as 3 ("inactive") of systemctl is-active.
func (c *Command) AcceptExit(codes ...int) *Command {
	if c.acceptExit == nil {
		c.acceptExit = map[int]bool{}
	}
	for _, code := range codes {
		c.acceptExit[code] = true
	}
	return c
}

// Program is the program the command runs.
func (c *Command) Program() string { return c.args[0].value }

// Argv is the program and its arguments, secrets replaced by "<redacted>":
// what a guard (Config.Allow) judges.
func (c *Command) Argv() []string {
	out := make([]string, len(c.args))
	for i, a := range c.args {
		out[i] = a.value
		if a.secret {
			out[i] = redacted
		}
	}
	return out
}

// String is the command as a shell line with secrets replaced by
// "<redacted>", for logs and errors. It is never executed.
func (c *Command) String() string {
	parts := make([]string, len(c.args))
	for i, a := range c.args {
		if a.secret {
			parts[i] = redacted
		} else {
			parts[i] = quoteArg(a.value)
		}
	}
	return strings.Join(parts, " ")
}

// validate checks what can be checked before anything is sent.
func (c *Command) validate() error {
	prog := c.Program()
	if !allowedPrograms[prog] {
		return fmt.Errorf("program %q is not allowed; the provider runs only %s", prog, strings.Join(AllowedPrograms(), ", "))
	}
	for i, a := range c.args {
		if strings.IndexByte(a.value, 0) >= 0 {
			what := "argument " + fmt.Sprint(i)
			if !a.secret {
				what += " " + quoteArg(strings.ReplaceAll(a.value, "\x00", `\0`))
			}
			return fmt.Errorf("%s contains a NUL byte, which no program can receive", what)
		}
	}
	return nil
}

// secrets returns the values to scrub from output shown in errors.
func (c *Command) secrets() []string {
	var out []string
	for _, a := range c.args {
		if a.secret && a.value != "" {
			out = append(out, a.value)
		}
	}
	if c.stdinSecret && len(c.stdin) > 0 {
		out = append(out, string(c.stdin))
		// A program may echo part of its input, such as one line of a
		// key file; scrub every line that could identify the secret.
		for _, line := range strings.Split(string(c.stdin), "\n") {
			if line = strings.TrimSpace(line); len(line) >= 8 {
				out = append(out, line)
			}
		}
	}
	// Longest first, so a value is scrubbed before a part of it.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrub replaces every secret in s.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
}
