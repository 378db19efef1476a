// The bit-level pg_tensor ops: shifts (binary shl / shr), bitcast and iota print as written,
// and survive custom -> generic -> custom and generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @bits(
// CHECK-NEXT:    %l = pg_tensor.binary shl %i, %i : tensor<4x8xi32>
// CHECK-NEXT:    %r = pg_tensor.binary shr %u, %u : tensor<4x8xui8>
// CHECK-NEXT:    %b = pg_tensor.bitcast %x : tensor<4x8xf32> to tensor<4x8xi32>
// CHECK-NEXT:    %h = pg_tensor.bitcast %s : tensor<4x8xi16> to tensor<4x8xf16>
// CHECK-NEXT:    %k = pg_tensor.iota {axis = 1 : i64} : tensor<4x8xi64>
// CHECK-NEXT:    %k0 = pg_tensor.iota {axis = 0 : i64} : tensor<4x8xi32>
// GENERIC-LABEL: sym_name = "bits"
// GENERIC:       %l = "pg_tensor.binary"(%i, %i) <{kind = #pg<binary shl>}> : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC-NEXT:  %r = "pg_tensor.binary"(%u, %u) <{kind = #pg<binary shr>}> : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xui8>
// GENERIC-NEXT:  %b = "pg_tensor.bitcast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xi32>
// GENERIC-NEXT:  %h = "pg_tensor.bitcast"(%s) : (tensor<4x8xi16>) -> tensor<4x8xf16>
// GENERIC-NEXT:  %k = "pg_tensor.iota"() <{axis = 1 : i64}> : () -> tensor<4x8xi64>
func.func @bits(%i: tensor<4x8xi32>, %u: tensor<4x8xui8>, %x: tensor<4x8xf32>, %s: tensor<4x8xi16>) {
  %l = pg_tensor.binary shl %i, %i : tensor<4x8xi32>
  %r = pg_tensor.binary shr %u, %u : tensor<4x8xui8>
  %b = pg_tensor.bitcast %x : tensor<4x8xf32> to tensor<4x8xi32>
  %h = pg_tensor.bitcast %s : tensor<4x8xi16> to tensor<4x8xf16>
  %k = pg_tensor.iota {axis = 1} : tensor<4x8xi64>
  %k0 = pg_tensor.iota {axis = 0 : i64} : tensor<4x8xi32>
  func.return
}
