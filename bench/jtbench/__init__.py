"""jsonb_toaster benchmark suite (see docs/benchmarks.md)."""
