//go:build !linux

package pvesim

import "time"

// threadCPU falls back to wall time where there is no thread CPU clock.
func threadCPU() int64 { return time.Now().UnixNano() }
