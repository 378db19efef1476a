// One case per pg_c verifier rule; each diagnostic names the op's line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_c.func': @k: 'pg_c.end_for' closes a loop that is not the innermost open one
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %i = pg_c.for 0 to 2
  %j = pg_c.for 0 to 2
  pg_c.end_for %i
  pg_c.end_for %j
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_c.func': @k: 1 loop(s) never closed
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %i = pg_c.for 0 to 4
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_c.func': @k: the body must be flat, found pg_c.func
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  pg_c.func @inner(%b: !pg.buffer<4xf32>) {
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_c.func': @k: arguments must be !pg.buffer, got f32
pg_c.func @k(%a: f32) {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_c.for': empty range [3, 1)
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %i = pg_c.for 3 to 1
  pg_c.end_for %i
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: 'pg_c.end_for': operand must be the result of a pg_c.for
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %c = pg_c.const 0 : index
  pg_c.end_for %c
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:10: error: 'pg_c.decl': expected an element type or index, or a vector of f32 or f64, got !pg.buffer<4xf32>
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %acc = "pg_c.decl"() <{init = 0.0 : f32}> : () -> !pg_c.var<!pg.buffer<4xf32>>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:10: error: 'pg_c.decl': init type i32 != variable type f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %acc = "pg_c.decl"() <{init = 0 : i32}> : () -> !pg_c.var<f32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_c.assign': value type i32 != variable type f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %acc = pg_c.decl 0.0 : f32
  %v = pg_c.const 1 : i32
  "pg_c.assign"(%acc, %v) : (!pg_c.var<f32>, i32) -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.read': value type i32 != variable type f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %acc = pg_c.decl 0.0 : f32
  %v = "pg_c.read"(%acc) : (!pg_c.var<f32>) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_c.const': value type i32 != result type f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %c = "pg_c.const"() <{value = 1 : i32}> : () -> f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.unary': unknown prefix operator '+' (one of - ! ~)
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1.0 : f32
  %y = pg_c.unary "+" %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.unary': '!' is not defined on f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1.0 : f32
  %y = pg_c.unary "!" %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.unary': '~' is not defined on i1
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1 : i1
  %y = pg_c.unary "~" %x : i1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.call': 'exp' does not take f32 (one of expf, logf, sqrtf, sinf)
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1.0 : f32
  %y = pg_c.call "exp"(%x) : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.call': math functions take a float, got i32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1 : i32
  %y = pg_c.call "expf"(%x) : i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.binary': '%' is not defined on f32 (one of + - * / max min)
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1.0 : f32
  %y = pg_c.binary "%" %x, %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.binary': '+' is not defined on i1 (one of & | ^)
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1 : i1
  %y = pg_c.binary "+" %x, %x : i1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.cmp': unknown comparison '<>' (one of < <= > >= == !=)
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %x = pg_c.const 1.0 : f32
  %y = pg_c.cmp "<>" %x, %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.select': expected an element type or index, got !pg.buffer<4xf32>
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %c = pg_c.const 1 : i1
  %y = pg_c.select %c, %a, %a : !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_c.cast': expected an element type or index, got !pg.buffer<4xf32>
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %y = pg_c.cast %a : !pg.buffer<4xf32> to f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.load': result type i32 != buffer element type f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %i = pg_c.const 0 : index
  %v = "pg_c.load"(%a, %i) : (!pg.buffer<4xf32>, index) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_c.store': value type i32 != buffer element type f32
pg_c.func @k(%a: !pg.buffer<4xf32>) {
  %i = pg_c.const 0 : index
  %v = pg_c.const 1 : i32
  pg_c.store %v, %a[%i] : i32, !pg.buffer<4xf32>
}

// -----
// Vectors hold f32 or f64 lanes and take + - * / max min only.
// CHECK: invalid.mlir:[[# @LINE + 4]]:8: error: 'pg_c.binary': '%' does not apply to vectors (one of + - * / max min)
pg_c.func @vector_mod() {
  %x = pg_c.const 1.0 : f32
  %v = pg_c.broadcast %x : f32 -> vector<4xf32>
  %m = pg_c.binary "%" %v, %v : vector<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_c.broadcast': C vectors hold f32 or f64 lanes, got vector<4xi32>
pg_c.func @int_lanes() {
  %x = pg_c.const 1 : i32
  %v = pg_c.broadcast %x : i32 -> vector<4xi32>
}
