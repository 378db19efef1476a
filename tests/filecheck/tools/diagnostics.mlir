// Malformed and invalid IR: one diagnostic per bad chunk on stderr, with file:line:col, the
// offending line and a caret; the valid chunk is still printed; the exit status is non-zero.
// RUN: not opt-tool %s --split-input-file 2>&1 | filecheck %s

// A syntax error points at the token the parser stopped at.
// CHECK: diagnostics.mlir:[[# @LINE + 4]]:31: error: Expected ':'
// CHECK-NEXT: {{^}}  %y = pg_tensor.unary exp %x tensor<4xf32>{{$}}
// CHECK-NEXT: {{^}}                              ^^^^^^{{$}}
func.func @missing_colon(%x: tensor<4xf32>) {
  %y = pg_tensor.unary exp %x tensor<4xf32>
  func.return
}

// -----
// An unknown op points at its name.
// CHECK: diagnostics.mlir:[[# @LINE + 4]]:8: error: Operation pg_tensor.bogus is not registered
// CHECK-NEXT: {{^}}  %y = pg_tensor.bogus %x : tensor<4xf32>{{$}}
// CHECK-NEXT: {{^}}       ^^^^^^^^^^^^^^^{{$}}
func.func @unknown_op(%x: tensor<4xf32>) {
  %y = pg_tensor.bogus %x : tensor<4xf32>
  func.return
}

// -----
// An undefined value points at its first use.
// CHECK: diagnostics.mlir:[[# @LINE + 2]]:15: error: value %nope is used but not defined
func.func @undefined_value(%x: tensor<4xf32>) {
  func.return %nope : tensor<4xf32>
}

// -----
// A verifier error points at the op that failed.
// CHECK: diagnostics.mlir:[[# @LINE + 4]]:8: error: 'pg_tensor.unary': 'exp' needs a float tensor, got i32
// CHECK-NEXT: {{^}}  %y = pg_tensor.unary exp %x : tensor<4xi32>{{$}}
// CHECK-NEXT: {{^}}       ^^^^^^^^^^^^^^^{{$}}
func.func @invalid(%x: tensor<4xi32>) {
  %y = pg_tensor.unary exp %x : tensor<4xi32>
  func.return
}

// -----
// CHECK: func.func @valid
func.func @valid(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
// CHECK-NOT: Traceback
