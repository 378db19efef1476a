// pg_tensor.contiguous: the custom form round-trips (custom and generic); its operand and
// result have one type (invalid.mlir).
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @copy(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    %t = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %c = pg_tensor.contiguous %t : tensor<8x4xf32>
// CHECK-NEXT:    func.return %c : tensor<8x4xf32>
// GENERIC: %c = "pg_tensor.contiguous"(%t) : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @copy(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %t = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %c = pg_tensor.contiguous %t : tensor<8x4xf32>
  func.return %c : tensor<8x4xf32>
}
