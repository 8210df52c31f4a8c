// Package bench is `make bench`: the provider's cost measured against
// pvesim with PVE's own task durations (pvesim Options.TimeScale) —
// requests by kind and per resource, wall time against the critical path
// of PVE's tasks, and the provider's peak RSS — for the scenarios of
// BENCHMARKS.md. The measuring helpers are plain functions with their own
// tests; TestBench (PVE_BENCH=1) runs the scenarios.
package bench
