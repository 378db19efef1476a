"""The LLVM target: convert-uop-to-llvm (xDSL's `llvm` dialect), its ALU helpers (alu.py)
and the LLVM IR printer (printer.py) that CPU:LLVM compiles with llvmlite."""
