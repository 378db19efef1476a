// One case per pg_tensor verifier rule; each diagnostic names the op's line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: pg_tensor.unary: element type f80 is not one of f16, f32, f64, i1, i8, ui8, i16, i32, i64, ui16, ui32, ui64, bf16
func.func @unsupported_element_type(%x: tensor<4xf80>) {
  %y = pg_tensor.unary neg %x : tensor<4xf80>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.const': value type f64 != element type f32
func.func @const_value_type() {
  %c = "pg_tensor.const"() <{value = 1.0 : f64}> : () -> tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.unary': 'not' needs a bool or integer tensor, got f32
func.func @not_on_float(%x: tensor<4xf32>) {
  %y = pg_tensor.unary not %x : tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.unary': 'exp' needs a float tensor, got i32
func.func @exp_on_int(%x: tensor<4xi32>) {
  %y = pg_tensor.unary exp %x : tensor<4xi32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.binary': 'xor' needs bool or integer tensors, got f32
func.func @xor_on_float(%x: tensor<4xf32>) {
  %y = pg_tensor.binary xor %x, %x : tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.binary': 'mod' needs integer tensors, got f32
func.func @mod_on_float(%x: tensor<4xf32>) {
  %y = pg_tensor.binary mod %x, %x : tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.binary': 'add' is not defined on bool tensors
func.func @add_on_bool(%x: tensor<4xi1>) {
  %y = pg_tensor.binary add %x, %x : tensor<4xi1>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: operand 'rhs' at position 1 does not verify:
// CHECK-NEXT: attribute tensor<8xf32> expected from variable 'T', but got tensor<4xf32>
func.func @binary_operand_types(%x: tensor<8xf32>, %y: tensor<4xf32>) {
  %z = "pg_tensor.binary"(%x, %y) <{kind = #pg<binary add>}> : (tensor<8xf32>, tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.cmp': result must be tensor<4xi1>, got tensor<4xi32>
func.func @cmp_result(%x: tensor<4xf32>) {
  %m = pg_tensor.cmp lt %x, %x : tensor<4xf32> -> tensor<4xi32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.where': condition must be tensor<4xi1>, got tensor<2xi1>
func.func @where_condition(%c: tensor<2xi1>, %x: tensor<4xf32>) {
  %r = pg_tensor.where %c, %x, %x : tensor<2xi1>, tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.cast': shape changes from (4,) to (2,)
func.func @cast_shape(%x: tensor<4xf32>) {
  %r = pg_tensor.cast %x : tensor<4xf32> to tensor<2xi32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.reduce': axes [2] must be distinct axes in [0, 2)
func.func @reduce_axes(%x: tensor<4x8xf32>) {
  %s = pg_tensor.reduce sum %x {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.reduce': result must be tensor<4x1xf32>, got tensor<4xf32>
func.func @reduce_keeps_dims(%x: tensor<4x8xf32>) {
  %s = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.reshape': a movement op must keep the element type
func.func @movement_element_type(%x: tensor<4x8xf32>) {
  %r = pg_tensor.reshape %x : tensor<4x8xf32> -> tensor<32xi32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.reshape': cannot reshape [4, 8] (32 elements) to [30] (30 elements)
func.func @reshape_count(%x: tensor<4x8xf32>) {
  %r = pg_tensor.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.permute': [0, 0] is not a permutation of 2 dims
func.func @permute_not_permutation(%x: tensor<4x8xf32>) {
  %t = pg_tensor.permute %x {perm = array<i64: 0, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.permute': result shape must be [8, 4], got [4, 8]
func.func @movement_result_shape(%x: tensor<4x8xf32>) {
  %t = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.expand': cannot expand [4, 2] to [4, 8]
func.func @expand_non_unit(%x: tensor<4x2xf32>) {
  %e = pg_tensor.expand %x : tensor<4x2xf32> -> tensor<4x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.pad': low [1] and high [0, 2] must be 2 non-negative sizes
func.func @pad_sizes(%x: tensor<4x8xf32>) {
  %p = "pg_tensor.pad"(%x) <{low = array<i64: 1>, high = array<i64: 0, 2>, value = 0.0 : f32}> : (tensor<4x8xf32>) -> tensor<5x10xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.pad': pad value type i32 != f32
func.func @pad_value_type(%x: tensor<4x8xf32>) {
  %p = "pg_tensor.pad"(%x) <{low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 0 : i32}> : (tensor<4x8xf32>) -> tensor<5x10xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.slice': start, step and result rank must match the input rank 2
func.func @slice_rank(%x: tensor<4x8xf32>) {
  %s = pg_tensor.slice %x {start = array<i64: 0>, step = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.slice': dim 1: start 1, step 2, size 5 reads outside [0, 8)
func.func @slice_bounds(%x: tensor<4x8xf32>) {
  %s = pg_tensor.slice %x {start = array<i64: 0, 1>, step = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x5xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.flip': axes [0, 0] must be distinct axes in [0, 2)
func.func @flip_axes(%x: tensor<4x8xf32>) {
  %f = pg_tensor.flip %x {axes = array<i64: 0, 0>} : tensor<4x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.gather': the index must be an integer tensor, got tensor<6x8xf32>
func.func @float_index(%w: tensor<100x8xf32>, %i: tensor<6x8xf32>) {
  %g = pg_tensor.gather %w[%i] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xf32> -> tensor<6x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.gather': table [100, 8] and index [6] need one rank and an axis in it, got axis 0
func.func @rank(%w: tensor<100x8xf32>, %i: tensor<6xi32>) {
  %g = pg_tensor.gather %w[%i] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6xi32> -> tensor<6xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.gather': table [100, 8] and index [6, 8] need one rank and an axis in it, got axis 2
func.func @axis(%w: tensor<100x8xf32>, %i: tensor<6x8xi32>) {
  %g = pg_tensor.gather %w[%i] {axis = 2 : i64} : tensor<100x8xf32>, tensor<6x8xi32> -> tensor<6x8xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.gather': table [100, 8] and index [6, 4] differ off axis 0
func.func @off_axis(%w: tensor<100x8xf32>, %i: tensor<6x4xi32>) {
  %g = pg_tensor.gather %w[%i] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x4xi32> -> tensor<6x4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.gather': result must be tensor<6x8xf32>, got tensor<6x8xf64>
func.func @result(%w: tensor<100x8xf32>, %i: tensor<6x8xi32>) {
  %g = pg_tensor.gather %w[%i] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32> -> tensor<6x8xf64>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.scatter_add': src must be tensor<6x8xf32>, got tensor<6x4xf32>
func.func @scatter_src(%w: tensor<100x8xf32>, %i: tensor<6x8xi32>, %s: tensor<6x4xf32>) {
  %r = pg_tensor.scatter_add %w[%i], %s {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32>, tensor<6x4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.scatter_add': cannot add bool tensors
func.func @scatter_bool(%w: tensor<10x8xi1>, %i: tensor<6x8xi32>, %s: tensor<6x8xi1>) {
  %r = pg_tensor.scatter_add %w[%i], %s {axis = 0 : i64} : tensor<10x8xi1>, tensor<6x8xi32>, tensor<6x8xi1>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.scatter_add': table [10, 8] and index [6, 4] differ off axis 0
func.func @scatter_off_axis(%w: tensor<10x8xf32>, %i: tensor<6x4xi32>, %s: tensor<6x4xf32>) {
  %r = pg_tensor.scatter_add %w[%i], %s {axis = 0 : i64} : tensor<10x8xf32>, tensor<6x4xi32>, tensor<6x4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: result 'result' at position 0 does not verify:
// CHECK-NEXT: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<8x4xf32>
func.func @contiguous_type(%x: tensor<4x8xf32>) {
  %c = "pg_tensor.contiguous"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.attention': q [2, 4, 8], k [2, 6, 7], v [2, 6, 5], bias [2, 4, 6]: want q (..., L, E), k (..., S, E), v (..., S, Ev), bias (..., L, S) with one leading shape
func.func @attention_key_width(%q: tensor<2x4x8xf32>, %k: tensor<2x6x7xf32>, %v: tensor<2x6x5xf32>, %b: tensor<2x4x6xf32>) {
  %r = pg_tensor.attention %q, %k, %v, %b scale 0.5 : tensor<2x4x8xf32>, tensor<2x6x7xf32>, tensor<2x6x5xf32>, tensor<2x4x6xf32> -> tensor<2x4x5xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.attention': q, k, v, bias and scale need one float type, got ['i32', 'i32', 'i32', 'i32'], scale i32
func.func @attention_ints(%q: tensor<4x8xi32>, %k: tensor<6x8xi32>, %v: tensor<6x5xi32>, %b: tensor<4x6xi32>) {
  %r = pg_tensor.attention %q, %k, %v, %b scale 1 : tensor<4x8xi32>, tensor<6x8xi32>, tensor<6x5xi32>, tensor<4x6xi32> -> tensor<4x5xi32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.attention': result must be tensor<4x5xf32>, got tensor<4x6xf32>
func.func @attention_result(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %b: tensor<4x6xf32>) {
  %r = pg_tensor.attention %q, %k, %v, %b scale 0.5 : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x5xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.attention': q [8], k [6, 8], v [6, 5] and bias [4, 6] need one rank of at least 2
func.func @attention_rank(%q: tensor<8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %b: tensor<4x6xf32>) {
  %r = pg_tensor.attention %q, %k, %v, %b scale 0.5 : tensor<8xf32>, tensor<6x8xf32>, tensor<6x5xf32>, tensor<4x6xf32> -> tensor<4x5xf32>
  func.return
}
