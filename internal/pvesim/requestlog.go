package pvesim

import (
	"encoding/json"
	"os"
	"strings"
)

func (s *Sim) logRequest(rec Request) {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	s.requests = append(s.requests, rec)
	if len(s.logPaths) == 0 {
		return
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	b = append(b, '\n')
	for _, p := range s.logPaths {
		// O_APPEND with one write per line keeps lines whole even when several
		// simulators share the file (PVESIM_REQUEST_LOG).
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			s.logf("pvesim: request log: %v", err)
			continue
		}
		_, _ = f.Write(b)
		_ = f.Close()
	}
}

// redactParams copies params, hiding secrets.
func redactParams(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "password") || strings.Contains(lk, "secret") ||
			strings.Contains(lk, "ticket") || lk == "otp" || lk == "tfa-challenge" {
			v = "<redacted>"
		}
		out[k] = v
	}
	return out
}
