"""Lowering per target: pg_uop kernels to target IR and target source.

    llvm/   convert-uop-to-llvm (xDSL's `llvm` dialect), its ALU helpers, the LLVM IR printer
    c/      convert-uop-to-c (`pg_c`) and the C printer
    ptx/    convert-uop-to-ptx (`pg_ptx`), its ALU lowering, the PTX printer
    wgsl/   convert-uop-to-wgsl (`pg_wgsl`) and the WGSL printer
    render.py        the one target -> printer dispatch (compile driver, debug, opt-tool -t)
    kernels.py       what every convert-uop-to-<target> shares (no-alias kernels, kernel
                     swap, GPU launch dims)
    outer_range.py   which CPU kernels may run their outer range in chunks on threads
    kernel_source.py what the C and WGSL printers share (value names, scopes, indentation)

Everything about one target lives in its folder; the kernel ABI names they share with the
runtimes are in `picograd.dialects.abi`.
"""
