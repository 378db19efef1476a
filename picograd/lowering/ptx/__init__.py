"""The PTX target: convert-uop-to-ptx (`pg_ptx`), its scalar ALU lowering (alu.py) and the
PTX printer (printer.py) whose text CUDA's driver loads (and ptxas checks)."""
