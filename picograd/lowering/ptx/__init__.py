"""picograd/lowering/ptx"""
