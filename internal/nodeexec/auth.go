package nodeexec

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// authMethods builds the client's authentication from cfg: public keys
// (the configured key, then the agent's) first, then the password, also
// answered to keyboard-interactive prompts as PAM asks for it. The
// returned closer releases the agent connection.
func authMethods(cfg *Config) ([]ssh.AuthMethod, func(), error) {
	var signers []ssh.Signer
	if cfg.PrivateKey != "" {
		s, err := parseKey(cfg.PrivateKey, cfg.PrivateKeyPassphrase)
		if err != nil {
			return nil, nil, err
		}
		signers = append(signers, s)
	}
	closer := func() {}
	var agentSigners func() ([]ssh.Signer, error)
	if cfg.Agent {
		sock := cfg.AgentSocket
		if sock == "" {
			sock = os.Getenv("SSH_AUTH_SOCK")
		}
		if sock == "" {
			return nil, nil, errors.New("the SSH agent is to be used, but SSH_AUTH_SOCK is not set: start an agent (eval $(ssh-agent); ssh-add) or give a private key or password")
		}
		d := net.Dialer{Timeout: 10 * time.Second}
		conn, err := d.DialContext(context.Background(), "unix", sock)
		if err != nil {
			return nil, nil, fmt.Errorf("connect to the SSH agent at %s: %w", sock, err)
		}
		closer = func() { _ = conn.Close() }
		agentSigners = agent.NewClient(conn).Signers
	}
	var methods []ssh.AuthMethod
	if len(signers) > 0 || agentSigners != nil {
		methods = append(methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			out := append([]ssh.Signer(nil), signers...)
			if agentSigners != nil {
				// An agent that fails leaves the configured key to try.
				if more, err := agentSigners(); err == nil {
					out = append(out, more...)
				}
			}
			return out, nil
		}))
	}
	if cfg.Password != "" {
		pw := cfg.Password.Reveal()
		methods = append(methods, ssh.Password(pw),
			ssh.KeyboardInteractive(func(_, _ string, questions []string, echos []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range questions {
					if !echos[i] {
						answers[i] = pw
					}
				}
				return answers, nil
			}))
	}
	if len(methods) == 0 {
		closer()
		return nil, nil, errors.New("no SSH credentials: give a private key, a password, or use the SSH agent")
	}
	return methods, closer, nil
}

// parseKey reads a PEM private key (OpenSSH, PKCS#1, PKCS#8 or SEC 1),
// decrypting it with passphrase when it is encrypted. Errors never
// include key material.
func parseKey(pemKey, passphrase Secret) (ssh.Signer, error) {
	s, err := ssh.ParsePrivateKey([]byte(pemKey.Reveal()))
	var missing *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return s, nil
	case errors.As(err, &missing):
		if passphrase == "" {
			return nil, errors.New("the SSH private key is encrypted: give its passphrase")
		}
		s, err = ssh.ParsePrivateKeyWithPassphrase([]byte(pemKey.Reveal()), []byte(passphrase.Reveal()))
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, errors.New("the SSH private key's passphrase is wrong")
		}
		if err != nil {
			return nil, fmt.Errorf("decrypt the SSH private key: %w", err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("parse the SSH private key (PEM expected, such as the content of ~/.ssh/id_ed25519): %w", err)
	}
}
