"""picograd/lowering/c"""
