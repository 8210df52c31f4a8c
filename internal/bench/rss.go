package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProcSampler watches the processes whose command name starts with a
// prefix (the provider, a child of the Terraform CLI) and keeps their peak
// resident set (VmHWM, the kernel's own high-water mark) and CPU time.
type ProcSampler struct {
	prefix string
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	peakKiB int64
	cpu     map[int]float64 // seconds, by PID
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// StartProcSampler samples every 20 ms until Stop.
func StartProcSampler(prefix string) *ProcSampler {
	p := &ProcSampler{prefix: prefix, stop: make(chan struct{}), done: make(chan struct{}), cpu: map[int]float64{}}
	go func() {
		defer close(p.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			p.sample()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Stop ends sampling and returns the peak RSS in MiB and the CPU seconds
// of every matching process seen.
func (p *ProcSampler) Stop() (peakMiB, cpuSeconds float64) {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.cpu {
		cpuSeconds += c
	}
	return float64(p.peakKiB) / 1024, cpuSeconds
}

func (p *ProcSampler) sample() {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || !strings.HasPrefix(string(comm), p.prefix) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		hwm := statusKiB(filepath.Join(d, "status"), "VmHWM:")
		cpu := statCPU(filepath.Join(d, "stat"))
		p.mu.Lock()
		p.peakKiB = max(p.peakKiB, hwm)
		if cpu > p.cpu[pid] {
			p.cpu[pid] = cpu
		}
		p.mu.Unlock()
	}
}

func statusKiB(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, ln := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(ln, []byte(field)); ok {
			f := strings.Fields(string(rest))
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// statCPU is utime + stime of /proc/<pid>/stat, in seconds.
func statCPU(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields count from its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / clockTicks
}
