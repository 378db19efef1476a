// The verifier rules of the bit-level ops: shifts need integers, a bitcast keeps the bit
// width and involves no bool, iota is i32 / i64 with an axis of the tensor.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.binary': 'shl' needs integer tensors, got f32
func.func @shl_on_float(%x: tensor<4xf32>) {
  %y = pg_tensor.binary shl %x, %x : tensor<4xf32>
  func.return
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.binary': 'shr' is not defined on bool tensors
func.func @shr_on_bool(%x: tensor<4xi1>) {
  %y = pg_tensor.binary shr %x, %x : tensor<4xi1>
  func.return
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.bitcast': cannot bitcast f32 to i16: needs two non-bool types of one bit width
func.func @bitcast_width(%x: tensor<4xf32>) {
  %y = pg_tensor.bitcast %x : tensor<4xf32> to tensor<4xi16>
  func.return
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.bitcast': cannot bitcast i8 to i1: needs two non-bool types of one bit width
func.func @bitcast_bool(%x: tensor<4xi8>) {
  %y = pg_tensor.bitcast %x : tensor<4xi8> to tensor<4xi1>
  func.return
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.bitcast': shape changes from (4,) to (2, 2)
func.func @bitcast_shape(%x: tensor<4xf32>) {
  %y = pg_tensor.bitcast %x : tensor<4xf32> to tensor<2x2xi32>
  func.return
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.iota': axis 2 is not in [0, 2)
func.func @iota_axis() {
  %y = pg_tensor.iota {axis = 2} : tensor<4x3xi32>
  func.return
}

// -----
// CHECK: bits-invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_tensor.iota': the element type must be i32 or i64, got f32
func.func @iota_float() {
  %y = pg_tensor.iota {axis = 0} : tensor<4xf32>
  func.return
}
