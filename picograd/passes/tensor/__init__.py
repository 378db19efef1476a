"""Passes within the `pg_tensor` stage."""
