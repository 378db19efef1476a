"""Passes within the `pg_loop` stage."""
