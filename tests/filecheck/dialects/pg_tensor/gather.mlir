// pg_tensor.gather and pg_tensor.scatter_add: the custom form round-trips (custom and generic)
// (its verifier rules are in invalid.mlir).
// RUN: opt-tool %s --split-input-file | %roundtrip | filecheck %s
// RUN: opt-tool %s --split-input-file --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @rows(%w: tensor<100x8xf32>, %ids: tensor<6x8xi32>) -> tensor<6x8xf32> {
// CHECK-NEXT:    %g = pg_tensor.gather %w[%ids] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32> -> tensor<6x8xf32>
// GENERIC: "pg_tensor.gather"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<100x8xf32>, tensor<6x8xi32>) -> tensor<6x8xf32>
func.func @rows(%w: tensor<100x8xf32>, %ids: tensor<6x8xi32>) -> tensor<6x8xf32> {
  %g = pg_tensor.gather %w[%ids] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32> -> tensor<6x8xf32>
  func.return %g : tensor<6x8xf32>
}

// -----
// CHECK-LABEL: func.func @last_axis(%x: tensor<3x5xi8>, %i: tensor<3x2xui8>) -> tensor<3x2xi8> {
// CHECK-NEXT:    %g = pg_tensor.gather %x[%i] {axis = 1 : i64} : tensor<3x5xi8>, tensor<3x2xui8> -> tensor<3x2xi8>
func.func @last_axis(%x: tensor<3x5xi8>, %i: tensor<3x2xui8>) -> tensor<3x2xi8> {
  %g = pg_tensor.gather %x[%i] {axis = 1 : i64} : tensor<3x5xi8>, tensor<3x2xui8> -> tensor<3x2xi8>
  func.return %g : tensor<3x2xi8>
}

// -----
// CHECK-LABEL: func.func @scatter(%g: tensor<100x8xf32>, %ids: tensor<6x8xi32>, %src: tensor<6x8xf32>) -> tensor<100x8xf32> {
// CHECK-NEXT:    %r = pg_tensor.scatter_add %g[%ids], %src {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>
// GENERIC: "pg_tensor.scatter_add"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<100x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>) -> tensor<100x8xf32>
func.func @scatter(%g: tensor<100x8xf32>, %ids: tensor<6x8xi32>, %src: tensor<6x8xf32>) -> tensor<100x8xf32> {
  %r = pg_tensor.scatter_add %g[%ids], %src {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>
  func.return %r : tensor<100x8xf32>
}
