"""picograd/lowering/llvm"""
