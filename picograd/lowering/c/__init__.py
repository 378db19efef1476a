"""The C target: convert-uop-to-c (`pg_c`) and the C printer (printer.py) that CPU:C builds
with the system C compiler."""
