"""jsonb_toaster benchmark suite (see bench/README.md)."""
