// pg_uop's vector ops refuse lanes of another type than the buffer's or the scalar's, bool
// lanes, more lanes than the buffer holds (or reaches, a step apart), a step below 1, reductions that are not add or mul, and an fma
// of integers.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: vectors-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.vload': vector type vector<4xi32> does not hold f32
pg_uop.kernel @wrong_lanes(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<4xi32>
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.vload': 16 lanes 1 apart do not fit a buffer of 8 elements
pg_uop.kernel @too_many_lanes(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<16xf32>
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.vload': 5 lanes 2 apart do not fit a buffer of 8 elements
pg_uop.kernel @too_far_apart(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.vload %a[%c0] step(2) : !pg.buffer<8xf32> -> vector<5xf32>
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.vload': a vload's step must be positive, got 0
pg_uop.kernel @no_step(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.vload %a[%c0] step(0) : !pg.buffer<8xf32> -> vector<4xf32>
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.broadcast': vector lanes must be a non-bool element type, got i1
pg_uop.kernel @bool_lanes() {
  %t = pg_uop.const 1 : i1
  %v = pg_uop.broadcast %t : i1 -> vector<4xi1>
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 4]]:8: error: 'pg_uop.vreduce': 'max' is not a reduction (add, mul)
pg_uop.kernel @max_reduce() {
  %x = pg_uop.const 1.0 : f32
  %v = pg_uop.broadcast %x : f32 -> vector<4xf32>
  %m = pg_uop.vreduce max %v : vector<4xf32> -> f32
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 5]]:3: error: 'pg_uop.vstore': vector type vector<4xf64> does not hold f32
pg_uop.kernel @store_lanes(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %x = pg_uop.const 1.0 : f64
  %v = pg_uop.broadcast %x : f64 -> vector<4xf64>
  pg_uop.vstore %v, %a[%c0] : vector<4xf64>, !pg.buffer<8xf32>
}

// -----
// CHECK: vectors-invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_uop.fma': fma needs floats or float vectors, got i32
pg_uop.kernel @integer_fma() {
  %x = pg_uop.const 1 : i32
  %f = pg_uop.fma %x, %x, %x : i32
}
