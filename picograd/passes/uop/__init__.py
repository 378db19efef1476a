"""Passes within the `pg_uop` stage."""
