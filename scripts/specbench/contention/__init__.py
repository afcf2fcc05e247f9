"""Contention: what else ran on the cell's GPUs and CPUs while it was measured, and whether that rejects the attempt.
samples (the records), verdict (the pure decision), cpu and nvml (taking samples), watch (the thread), devices
(which GPUs are the cell's), quiet (waiting for a quiet machine)."""
