// pg_uop's bit ops refuse floats (shifts) and width changes or bools (bitcast).
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: bits-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.bitcast': cannot bitcast f32 to i16: needs two non-bool types of one bit width
pg_uop.kernel @bad_width() {
  %c = pg_uop.const 1.0 : f32
  %b = pg_uop.bitcast %c : f32 to i16
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.binary': 'shl' needs integer operands, got f32
pg_uop.kernel @float_shift() {
  %c = pg_uop.const 1.0 : f32
  %b = pg_uop.binary shl %c, %c : f32
}
