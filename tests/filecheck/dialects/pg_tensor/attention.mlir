// pg_tensor.attention: the custom form round-trips (custom and generic), the scale exactly
// (its verifier rules are in invalid.mlir).
// RUN: opt-tool %s --split-input-file | %roundtrip | filecheck %s
// RUN: opt-tool %s --split-input-file --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @heads(
// CHECK-NEXT:    %r = pg_tensor.attention %q, %k, %v, %b scale 0.1767766922712326 : tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x5xf32>, tensor<2x3x4x6xf32> -> tensor<2x3x4x5xf32>
// CHECK-NEXT:    func.return %r : tensor<2x3x4x5xf32>
// GENERIC: "pg_tensor.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{scale = 0.176776692 : f32}> : (tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x5xf32>, tensor<2x3x4x6xf32>) -> tensor<2x3x4x5xf32>
func.func @heads(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x5xf32>, %b: tensor<2x3x4x6xf32>) -> tensor<2x3x4x5xf32> {
  %r = pg_tensor.attention %q, %k, %v, %b scale 0.1767766922712326 : tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x5xf32>, tensor<2x3x4x6xf32> -> tensor<2x3x4x5xf32>
  func.return %r : tensor<2x3x4x5xf32>
}

// -----
// One query, no leading dims, an f64 scale that keeps every digit.
// CHECK-LABEL: func.func @one_query(
// CHECK-NEXT:    %r = pg_tensor.attention %q, %k, %v, %b scale 0.1 : tensor<1x4xf64>, tensor<3x4xf64>, tensor<3x2xf64>, tensor<1x3xf64> -> tensor<1x2xf64>
func.func @one_query(%q: tensor<1x4xf64>, %k: tensor<3x4xf64>, %v: tensor<3x2xf64>, %b: tensor<1x3xf64>) -> tensor<1x2xf64> {
  %r = pg_tensor.attention %q, %k, %v, %b scale 0.1 : tensor<1x4xf64>, tensor<3x4xf64>, tensor<3x2xf64>, tensor<1x3xf64> -> tensor<1x2xf64>
  func.return %r : tensor<1x2xf64>
}
