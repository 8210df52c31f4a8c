package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// faultsUsage is the -faults flag's help: the spec's whole syntax, so that
// pvesim -h is enough to write one.
var faultsUsage = "faults in force from the start: a spec, or @FILE to read one (see below)"

// controlUsage describes the -control listener.
const controlUsage = "host:port of a plain-HTTP control listener (\"\" = none; port 0 picks one, printed as \"control\" in the JSON line): " +
	"GET /faults prints the faults in force, PUT /faults with a spec as body replaces them, DELETE /faults clears them. " +
	"It is a listener of its own, never one of the nodes' API ports"

// loadFaultSpec reads the -faults value: the spec, or @FILE.
func loadFaultSpec(v string) (string, []pvesim.Fault, error) {
	spec := v
	if name, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", nil, fmt.Errorf("-faults: %w", err)
		}
		spec = string(b)
	}
	fs, err := pvesim.ParseFaultSpec(spec)
	if err != nil {
		return "", nil, fmt.Errorf("-faults: %w", err)
	}
	return spec, fs, nil
}

// controlHandler serves /faults for sim.
func controlHandler(sim *pvesim.Sim) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/faults", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch r.Method {
		case http.MethodGet:
			_, _ = io.WriteString(w, sim.FaultSpec())
		case http.MethodPut, http.MethodPost:
			b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if err := sim.SetFaultSpec(string(b)); err != nil {
				http.Error(w, err.Error()+"\n\n"+pvesim.FaultSpecHelp, http.StatusBadRequest)
				return
			}
			_, _ = io.WriteString(w, sim.FaultSpec())
		case http.MethodDelete:
			sim.ClearFaults()
		default:
			w.Header().Set("Allow", "GET, PUT, POST, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
	return mux
}

// startControl serves the control listener on addr until ctx ends; it
// returns the address it listens on.
func startControl(ctx context.Context, addr string, sim *pvesim.Sim, stderr io.Writer) (string, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("-control: %w", err)
	}
	srv := &http.Server{Handler: controlHandler(sim), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_, _ = fmt.Fprintln(stderr, "pvesim: control:", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}
