"""The WGSL target: convert-uop-to-wgsl (`pg_wgsl`) and the WGSL printer (printer.py) whose
text WebGPU compiles."""
