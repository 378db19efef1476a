// One case per pg_wgsl verifier rule; each diagnostic names the op's line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: 'pg_wgsl.end_for' closes a loop that is not the innermost open loop or if
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.for 0 to 2
  %j = pg_wgsl.for 0 to 2
  pg_wgsl.end_for %i
  pg_wgsl.end_for %j
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: 'pg_wgsl.end_if' does not close an open if
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_wgsl.const 1 : i1
  pg_wgsl.if %c
  %i = pg_wgsl.for 0 to 2
  pg_wgsl.end_if
  pg_wgsl.end_for %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: 'pg_wgsl.end_for' closes a loop that is not the innermost open loop or if
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.for 0 to 2
  %c = pg_wgsl.const 1 : i1
  pg_wgsl.if %c
  pg_wgsl.end_for %i
  pg_wgsl.end_if
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: 1 loop(s) or if(s) never closed
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.for 0 to 4
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: the body must be flat, found pg_wgsl.fn
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  pg_wgsl.fn @inner(%b: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: arguments must be !pg.buffer, got f32
pg_wgsl.fn @k(%a: f32) grid [1, 1, 1] block [1, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: grid must be 3 positive sizes, got [4, 1]
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [4, 1] block [1, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: block must be 3 positive sizes, got [0, 1, 1]
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [0, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @k: grid must be an i64 array, got i32
"pg_wgsl.fn"() <{sym_name = "k", grid = array<i32: 1, 1, 1>, block = array<i64: 1, 1, 1>}> ({
^bb0(%a: !pg.buffer<4xf32>):
}) : () -> ()

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.for': empty range [3, 1)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.for 3 to 1
  pg_wgsl.end_for %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.for': range [0, 4294967296) does not fit in i32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.for 0 to 4294967296
  pg_wgsl.end_for %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: 'pg_wgsl.end_for': operand must be the result of a pg_wgsl.for
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_wgsl.const 0 : i32
  pg_wgsl.end_for %c
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.builtin': unknown built-in 'global_invocation_id' (one of workgroup_id, local_invocation_id)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %g = pg_wgsl.builtin global_invocation_id 0
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.builtin': dim must be 0, 1 or 2, got 3
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %g = pg_wgsl.builtin workgroup_id 3
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.workgroup': buffer element type f64 is not f32, i32 or i1 (or an emulated f16, i8, ui8, i16)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %s = pg_wgsl.workgroup : !pg.buffer<4xf64>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:10: error: 'pg_wgsl.var': expected f32, i32 or i1 (or an emulated f16, i8, ui8, i16), got f64
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %acc = pg_wgsl.var 0.0 : f64
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:10: error: 'pg_wgsl.var': init type i32 != variable type f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %acc = "pg_wgsl.var"() <{init = 0 : i32}> : () -> !pg_wgsl.var<f32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_wgsl.assign': value type i32 != variable type f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %acc = pg_wgsl.var 0.0 : f32
  %v = pg_wgsl.const 1 : i32
  "pg_wgsl.assign"(%acc, %v) : (!pg_wgsl.var<f32>, i32) -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.read': value type i32 != variable type f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %acc = pg_wgsl.var 0.0 : f32
  %v = "pg_wgsl.read"(%acc) : (!pg_wgsl.var<f32>) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.const': expected f32, i32 or i1 (or an emulated f16, i8, ui8, i16), got index
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = "pg_wgsl.const"() <{value = 1 : index}> : () -> index
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.const': value type i32 != result type f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = "pg_wgsl.const"() <{value = 1 : i32}> : () -> f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.unary': unknown prefix operator '+' (one of - ! ~)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1.0 : f32
  %y = pg_wgsl.unary "+" %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.unary': '!' is not defined on f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1.0 : f32
  %y = pg_wgsl.unary "!" %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.unary': '-' is not defined on i1
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1 : i1
  %y = pg_wgsl.unary "-" %x : i1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.call': built-in functions take an f32, got i32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1 : i32
  %y = pg_wgsl.call "exp"(%x) : i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.call': unknown built-in function 'expf' (one of exp, log, sqrt, sin, exp2, log2)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1.0 : f32
  %y = pg_wgsl.call "expf"(%x) : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.binary': '%' is not defined on f32 (one of + - * / max min)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1.0 : f32
  %y = pg_wgsl.binary "%" %x, %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.binary': '^' is not defined on i1 (one of & |)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1 : i1
  %y = pg_wgsl.binary "^" %x, %x : i1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.cmp': comparison '<' is not defined on i1 (one of == !=)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1 : i1
  %y = pg_wgsl.cmp "<" %x, %x : i1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.cmp': comparison '<>' is not defined on f32 (one of < <= > >= == !=)
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1.0 : f32
  %y = pg_wgsl.cmp "<>" %x, %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.select': expected f32, i32 or i1 (or an emulated f16, i8, ui8, i16), got !pg.buffer<4xf32>
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_wgsl.const 1 : i1
  %y = pg_wgsl.select %c, %a, %a : !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_wgsl.cast': expected f32, i32 or i1 (or an emulated f16, i8, ui8, i16), got !pg.buffer<4xf32>
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %y = pg_wgsl.cast %a : !pg.buffer<4xf32> to f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.cast': a cast from f32 to itself
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_wgsl.const 1.0 : f32
  %y = pg_wgsl.cast %x : f32 to f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.load': result type i32 != buffer element type f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.const 0 : i32
  %v = "pg_wgsl.load"(%a, %i) : (!pg.buffer<4xf32>, i32) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:8: error: 'pg_wgsl.load': a mask needs an 'other' value and vice versa
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.const 0 : i32
  %m = pg_wgsl.const 1 : i1
  %v = "pg_wgsl.load"(%a, %i, %m) : (!pg.buffer<4xf32>, i32, i1) -> f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.load': buffer element type f64 is not f32, i32 or i1 (or an emulated f16, i8, ui8, i16)
pg_wgsl.fn @k(%a: !pg.buffer<4xf64>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.const 0 : i32
  %v = pg_wgsl.load %a[%i] : !pg.buffer<4xf64> -> f64
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_wgsl.store': value type i32 != buffer element type f32
pg_wgsl.fn @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %i = pg_wgsl.const 0 : i32
  %v = pg_wgsl.const 1 : i32
  pg_wgsl.store %v, %a[%i] : i32, !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.binary': arithmetic on i8, which WGSL emulates: compute it in i32 (uop-legalize{target=wgsl})
pg_wgsl.fn @k(%a: !pg.buffer<4xi8>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_wgsl.const 1 : i8
  %s = pg_wgsl.binary "+" %c, %c : i8
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_wgsl.unary': arithmetic on f16, which WGSL emulates: compute it in f32 (uop-legalize{target=wgsl})
pg_wgsl.fn @k(%a: !pg.buffer<4xf16>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_wgsl.const 1.0 : f16
  %s = pg_wgsl.unary "-" %c : f16
}
