"""picograd/lowering/wgsl"""
