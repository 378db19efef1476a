// One case per pg_uop verifier rule; each diagnostic names the op's line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_uop.kernel': @k: 'pg_uop.end' closes a range that is not the innermost open range or if
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 2 global
  %j = pg_uop.range 0 to 2 loop
  pg_uop.end %i
  pg_uop.end %j
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_uop.kernel': @k: the body must be flat, found pg_loop.range
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_uop.kernel': @k: 1 range(s) or if(s) never closed
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_uop.range': empty range [3, 1)
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 3 to 1 global
  pg_uop.end %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: 'pg_uop.end': operand must be the result of a pg_uop.range
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = pg_uop.const 0 : index
  pg_uop.end %c
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_uop.special': dim must be 0, 1 or 2 and size positive, got 3, 8
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %g = pg_uop.special global_id 3 size 8
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:10: error: 'pg_uop.acc': init type f64 != register type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %acc = "pg_uop.acc"() <{init = 0.0 : f64}> : () -> !pg_uop.acc<f32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.acc_load': result type i32 != register type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %acc = pg_uop.acc 0.0 : f32
  %v = "pg_uop.acc_load"(%acc) : (!pg_uop.acc<f32>) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_uop.acc_store': value type i32 != register type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %acc = pg_uop.acc 0.0 : f32
  %one = pg_uop.const 1 : i32
  "pg_uop.acc_store"(%acc, %one) : (!pg_uop.acc<f32>, i32) -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.load': result type i32 != buffer element type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %v = "pg_uop.load"(%a, %i) : (!pg.buffer<4xf32>, index) -> i32
  pg_uop.end %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.load': a mask needs an 'other' value and vice versa
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %v = "pg_uop.load"(%a, %i) <{other = 0.0 : f32}> : (!pg.buffer<4xf32>, index) -> f32
  pg_uop.end %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_uop.store': value type i32 != buffer element type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %one = pg_uop.const 1 : i32
  pg_uop.store %one, %a[%i] : i32, !pg.buffer<4xf32>
  pg_uop.end %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_uop.const': value type f64 != result type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = "pg_uop.const"() <{value = 1.0 : f64}> : () -> f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.unary': 'not' needs a bool or integer, got f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = pg_uop.const 1.0 : f32
  %n = pg_uop.unary not %c : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.unary': 'log' needs a float, got i32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = pg_uop.const 1 : i32
  %n = pg_uop.unary log %c : i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.binary': 'and' needs bool or integer operands, got f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = pg_uop.const 1.0 : f32
  %n = pg_uop.binary and %c, %c : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.binary': 'mul' is not defined on i1
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = pg_uop.const 1 : i1
  %n = pg_uop.binary mul %c, %c : i1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_uop.kernel': @k: 'pg_uop.endif' does not close an open if
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  pg_uop.endif
  pg_uop.end %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_uop.kernel': @k: 'pg_uop.end' closes a range that is not the innermost open range or if
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %t = pg_uop.const 1 : i1
  pg_uop.if %t
  pg_uop.end %i
  pg_uop.endif
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_uop.kernel': @k: 1 range(s) or if(s) never closed
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %t = pg_uop.const 1 : i1
  pg_uop.if %t
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:13: error: operand is used with type i1, but has been previously used or defined with type f32
pg_uop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c = pg_uop.const 1.0 : f32
  pg_uop.if %c
  pg_uop.endif
}
